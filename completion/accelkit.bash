# Bash completion for the accelkit programs: docsim, skyline, gmmscore, editdist4r,
# clmatmul and clkmeans. It needs only bash's programmable completion, not the
# bash-completion package's helpers. Installed as completions/accelkit, with a link
# completions/PROG for each program (the name bash-completion's loader looks for);
# without that package, source this file from ~/.bashrc.

# One table a program, an option a line: SHORT LONG ARG. SHORT is - where there is no
# short form. ARG says what follows the option: - (nothing), file, device, num or text
# (nothing to offer), a|b|c (those words; "file" among them adds file names), or
# list:a|b (a comma-separated list of those words).
_accelkit_common='
-h --help -
-V --version -
-v --verbose -
-o --output file
-O --output-format text|npy
-d --device device
-j --threads num
- --list-devices -
- --progress -
- --max-device-mem num'

_accelkit_opts_docsim='
-q --queries file
-k --top num
-t --threshold num
- --matrix -
- --ids -
- --format auto|text|libsvm|mm|dense
- --weight tfidf|tf|binary|none
- --sublinear-tf -
- --min-df num
- --max-df num
- --stop-words file
- --ngram text
- --char-ngram text
- --precision double|single
- --first-record num'

_accelkit_opts_skyline='
-f --fields num
-p --prefer list:min|max
-Q --query file
-t --delimiter text
- --header -
- --distinct -
- --index -
- --count -
- --layers -'

_accelkit_opts_gmmscore='
-m --models file
-f --format auto|text|npy|htk|ark
- --dims num
- --mode sum|max
-t --top num
-a --all -
- --chunk num
- --first-frame num
-O --output-format text|npy|ark'

_accelkit_opts_editdist4r='
-a --seqs-a file
-b --seqs-b file
- --format auto|lines|fasta|fastq
- --all-vs-all -
-u --utf8 -
-k --max-dist num
-p --path -
-t --block 1|2|3
- --algo auto|4r|bp|dp
- --mode global|infix|prefix'

_accelkit_opts_clmatmul='
- --transpose-a -
- --transpose-b -
- --alpha num
-c --c0 file
- --beta num
- --double -
- --precision fp32|tf32
- --verify -
- --bench num
- --repeat num
- --seed num
- --transfers auto|rect|packed
- --tile num
- --tile-k num
- --item num
- --vector num
- --load-vector num
- --patch num
- --band num
- --unroll num
- --staging async|direct|local|wgmma
- --max-regs num
- --header -
- --platform text'

_accelkit_opts_clkmeans='
-k --clusters num
- --assign file
-C --centroids file
- --distances -
- --init k-means++|random|file
- --seed num
- --n-init num
- --max-iter num
- --tol num
-f --fields num
-t --delimiter text
- --header -
- --with-rows -
- --platform text'

# _accelkit_table PROG: PROG's option table, the common options included.
_accelkit_table() {
	local v=_accelkit_opts_$1
	[[ -n ${!v-} ]] || return 1
	printf '%s\n%s\n' "${!v}" "$_accelkit_common"
}

# _accelkit_arg TABLE OPT: what OPT (-X, --long or a unique prefix of a long option,
# as getopt_long takes it) expects after it; nothing when OPT is not an option.
_accelkit_arg() {
	local s l a found= n=0
	while read -r s l a; do
		[[ -n $l ]] || continue
		if [[ ($s != - && $2 == "$s") || $2 == "$l" ]]; then
			printf '%s\n' "$a"
			return
		fi
		if [[ $2 == --?* && $l == "$2"* ]]; then
			found=$a
			n=$((n + 1))
		fi
	done <<<"$1"
	[[ $n == 1 ]] && printf '%s\n' "$found"
}

# _accelkit_prev_arg TABLE WORD: what WORD, the word before the one being completed,
# leaves to be given: an option's argument kind, or nothing. Short options may be
# bundled (-vd): the last one takes the argument.
_accelkit_prev_arg() {
	local a i
	case $2 in
	--?*)
		# An option without an argument (--distinct) leaves the next word an operand.
		a=$(_accelkit_arg "$1" "$2")
		if [[ $a != - ]]; then
			printf '%s\n' "$a"
		fi
		;;
	-?*)
		for ((i = 1; i < ${#2}; i++)); do
			a=$(_accelkit_arg "$1" "-${2:i:1}")
			[[ -n $a ]] || return
			if [[ $a != - ]]; then
				# The argument is the rest of the word, or the next word.
				((i == ${#2} - 1)) && printf '%s\n' "$a"
				return
			fi
		done
		;;
	esac
}

# _accelkit_words: the command line's words as the program will see them, into words
# and cword. bash splits COMP_WORDS at the characters of COMP_WORDBREAKS, so that
# --device=gpu:1 comes as --device = gpu : 1; glue such pieces back where no blank
# separates them.
_accelkit_words() {
	words=() cword=0
	if [[ -z ${COMP_LINE+set} ]]; then
		words=("${COMP_WORDS[@]}")
		cword=$COMP_CWORD
		return
	fi
	local line=${COMP_LINE:0:COMP_POINT} i w blank j=-1
	for ((i = 0; i <= COMP_CWORD && i < ${#COMP_WORDS[@]}; i++)); do
		blank=${line%%[![:space:]]*}
		line=${line#"$blank"}
		w=${COMP_WORDS[i]}
		# The word under the cursor ends at the cursor.
		((i == COMP_CWORD)) && w=$line
		if ((j >= 0)) && [[ -z $blank && ($w == [=:]* || ${words[j]} == *[=:]) ]]; then
			words[j]+=$w
		else
			words[++j]=$w
		fi
		line=${line#"$w"}
	done
	cword=$j
}

# _accelkit_add COMPGEN-ARGS...: add compgen's words to COMPREPLY (no word splitting
# or globbing of file names on the way).
_accelkit_add() {
	local w
	while IFS= read -r w; do
		COMPREPLY+=("$w")
	done < <(compgen "$@")
}

# _accelkit_files CUR: file names (readline quotes them and marks directories).
_accelkit_files() {
	compopt -o filenames 2>/dev/null
	_accelkit_add -f -- "$1"
}

# _accelkit_devices CMD CUR: auto, cpu, gpu and the devices CMD --list-devices names
# (the first field; the OpenCL programs' second field, cpu:N or gpu:N, too); gpu:all
# (and cpu:all for the OpenCL programs) for the programs that divide their work over devices.
_accelkit_devices() {
	local d=' auto cpu gpu ' f1 f2 rest
	case ${1##*/} in
	gmmscore | editdist4r | docsim | skyline) d+='gpu:all ' ;;
	clmatmul | clkmeans) d+='gpu:all cpu:all ' ;;
	esac
	while IFS=$'\t' read -r f1 f2 rest; do
		[[ $d == *" $f1 "* ]] || d+="$f1 "
		[[ $f2 =~ ^(cpu|gpu)(:[0-9]+)?$ && $d != *" $f2 "* ]] && d+="$f2 "
	done < <("$1" --list-devices 2>/dev/null </dev/null)
	IFS=' ' _accelkit_add -W "$d" -- "$2"
}

# _accelkit_value KIND CMD CUR: the completions of an option's argument.
_accelkit_value() {
	local kind=$1 cur=$3 head=
	case $kind in
	- | num | text) return ;;
	file) _accelkit_files "$cur" ;;
	device) _accelkit_devices "$2" "$cur" ;;
	list:*)
		[[ $cur == *,* ]] && head=${cur%,*},
		IFS='|' _accelkit_add -P "$head" -W "${kind#list:}" -- "${cur##*,}"
		compopt -o nospace 2>/dev/null
		;;
	*)
		[[ "|$kind|" == *"|file|"* ]] && _accelkit_files "$cur"
		kind=${kind/#file|/}
		kind=${kind/%|file/}
		kind=${kind//|file|/|}
		IFS='|' _accelkit_add -W "$kind" -- "$cur"
		;;
	esac
}

# The completion function of every accelkit program: complete -F calls it with the
# command, the word being completed and the word before it.
_accelkit() {
	local prog=${1##*/} table words cword cur arg= head= i s l a
	COMPREPLY=()
	table=$(_accelkit_table "$prog") || return 0
	_accelkit_words
	cur=${words[cword]}

	for ((i = 1; i < cword; i++)); do
		if [[ ${words[i]} == -- ]]; then
			_accelkit_files "$cur"
			_accelkit_trim "$cur"
			return 0
		fi
	done
	if ((cword > 1)) && [[ $cur != --*=* ]]; then
		arg=$(_accelkit_prev_arg "$table" "${words[cword - 1]}")
	fi
	if [[ -n $arg ]]; then
		_accelkit_value "$arg" "${words[0]}" "$cur"
	elif [[ $cur == --*=* ]]; then
		arg=$(_accelkit_arg "$table" "${cur%%=*}")
		head=${cur%%=*}=
		[[ -n $arg ]] && _accelkit_value "$arg" "${words[0]}" "${cur#*=}"
		COMPREPLY=("${COMPREPLY[@]/#/$head}")
	elif [[ $cur == -* ]]; then
		local names=
		while read -r s l a; do
			[[ -n $l ]] || continue
			[[ $s != - ]] && names+=" $s"
			names+=" $l"
		done <<<"$table"
		IFS=' ' _accelkit_add -W "$names" -- "$cur"
	else
		_accelkit_files "$cur"
	fi
	_accelkit_trim "$cur"
	return 0
}

# _accelkit_trim CUR: readline replaces only the text after the last COMP_WORDBREAKS
# character of CUR (after the = of --device=, the : of gpu:), so the completions must
# start there too.
_accelkit_trim() {
	[[ -n ${COMP_LINE+set} ]] || return 0
	local i keep=
	for ((i = ${#1} - 1; i >= 0; i--)); do
		if [[ $COMP_WORDBREAKS == *"${1:i:1}"* ]]; then
			keep=${1:0:i+1}
			break
		fi
	done
	[[ -n $keep ]] && COMPREPLY=("${COMPREPLY[@]#"$keep"}")
	return 0
}

complete -F _accelkit docsim skyline gmmscore editdist4r clmatmul clkmeans
