#!/usr/bin/env python3
"""BoTorch's is_non_dominated on the GPU, for bench/skyline.

  skyline_botorch.py classic FILE.npy          minimise every column
  skyline_botorch.py spatial FILE.npy Q.npy    minimise the squared distances to the
                                               hull vertices of Q

Prints 'seconds count' for one timed call (after a warm-up on a small slice): the
time of is_non_dominated alone, synchronised, and the number of non-dominated rows.
"""
import sys
import time

import numpy as np
import torch
from botorch.utils.multi_objective.pareto import is_non_dominated


def main(argv):
    mode, path = argv[0], argv[1]
    dev = torch.device('cuda')
    P = torch.from_numpy(np.load(path)).to(dev)
    if mode == 'spatial':
        from scipy.spatial import ConvexHull
        Q = np.load(argv[2]).astype(np.float64)
        V = torch.from_numpy(Q[ConvexHull(Q).vertices]).to(dev)
        P = P.double()
        Y = -((P[:, None, :] - V[None, :, :]) ** 2).sum(-1)
    else:
        Y = -P
    is_non_dominated(Y[:2000], deduplicate=False)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    mask = is_non_dominated(Y, deduplicate=False)
    torch.cuda.synchronize()
    t1 = time.perf_counter()
    print('%.6f %d' % (t1 - t0, int(mask.sum())))


if __name__ == '__main__':
    main(sys.argv[1:])
