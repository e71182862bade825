//! The shell evaluator on the constructs launch scripts are written with (snippets written for
//! these tests after the patterns of public launch scripts), its caps on hostile input, and the
//! Megatron reader's errors for what a script leaves unknown.

use std::time::{Duration, Instant};

use fmperf_launch::megatron::parse_args;
use fmperf_launch::shell::{Command, command, read};

fn texts(c: &Command) -> Vec<&str> {
    c.args.iter().map(|w| w.text.as_str()).collect()
}

fn args(a: &[&str]) -> Vec<String> {
    a.iter().map(|s| s.to_string()).collect()
}

/// The value after `flag` among the command's words.
fn value<'a>(c: &'a Command, flag: &str) -> Option<&'a str> {
    let t = texts(c);
    t.iter().position(|w| *w == flag).and_then(|i| t.get(i + 1).copied())
}

#[test]
fn arrays_with_comments_appends_and_strings_run_later() {
    let s = r#"#!/bin/bash
GPT_ARGS=(
    --num-layers 32        # depth
    # --hidden-size 1      (commented out)
    --hidden-size 4096
    --num-attention-heads "32"
)
GPT_ARGS+=(--seq-length 4096)
DATA="--data-path /d/a_text_document"
CMD="torchrun --nproc_per_node 8 pretrain_gpt.py ${GPT_ARGS[@]} ${DATA} --first ${GPT_ARGS[0]}"
echo $CMD
$CMD
"#;
    let c = command(s);
    assert_eq!(c.script.as_ref().map(|w| w.text.as_str()), Some("pretrain_gpt.py"));
    assert_eq!(
        texts(&c),
        [
            "--num-layers",
            "32",
            "--hidden-size",
            "4096",
            "--num-attention-heads",
            "32",
            "--seq-length",
            "4096",
            "--data-path",
            "/d/a_text_document",
            "--first",
            "--num-layers"
        ]
    );
    // The same string run by `bash -c`, by `eval`, and by `srun … bash -c`.
    for run in ["bash -c \"$CMD\"", "eval $CMD", "eval \"$CMD\"", "srun -N 2 --gpus-per-node 8 bash -c \"$CMD\""] {
        let c = command(&s.replace("$CMD\n", &format!("{run}\n")).replace("echo ", "# "));
        assert_eq!(value(&c, "--seq-length"), Some("4096"), "{run}");
        assert_eq!(c.args.last().map(|w| w.text.as_str()), Some("--num-layers"), "{run}");
    }
}

#[test]
fn parameter_expansion_forms() {
    let s = r#"
: "${TP:=4}"
PP=${PP-2}
EMPTY=
A=${EMPTY:-fallback}
B=${EMPTY-kept_empty}
C=${TP:+--sequence-parallel}
NAME=/models/llama-3-8b.tar.gz
python train.py --tp $TP --pp $PP --a $A --b "$B" $C --len ${#NAME} --base ${NAME##*/} --stem ${NAME%%.*} \
  --ext ${NAME#*.} --dir ${NAME%/*} --sub ${NAME/llama/LLAMA} --up ${PP^^} --slice ${NAME:1:6} \
  --world $(( TP * PP * ${NODES:-2} )) --pow $((2**10))
"#;
    let c = command(s);
    let want = [
        ("--tp", "4"),
        ("--pp", "2"),
        ("--a", "fallback"),
        ("--b", ""),
        ("--len", "25"),
        ("--base", "llama-3-8b.tar.gz"),
        ("--stem", "/models/llama-3-8b"),
        ("--ext", "tar.gz"),
        ("--dir", "/models"),
        ("--sub", "/models/LLAMA-3-8b.tar.gz"),
        ("--up", "2"),
        ("--slice", "models"),
        ("--world", "16"),
        ("--pow", "1024"),
    ];
    for (flag, v) in want {
        assert_eq!(value(&c, flag), Some(v), "{flag}: {:?}", texts(&c));
    }
    assert!(texts(&c).contains(&"--sequence-parallel"));
    // The defaults of variables the script does not set are named in a note.
    assert!(c.notes.iter().any(|n| n.contains("TP=4") && n.contains("NODES=2")), "{:?}", c.notes);
}

#[test]
fn conditions_on_known_values_take_their_branch() {
    let s = r#"
MODEL_SIZE=${MODEL_SIZE:-70B}
if [ "$MODEL_SIZE" = "7B" ]; then
    LAYERS=32
elif [[ $MODEL_SIZE == 70* ]]; then
    LAYERS=80
else
    echo "unknown size"; exit 1
fi
case $MODEL_SIZE in
    7B|13B) HIDDEN=4096 ;;
    70B)    HIDDEN=8192 ;;
    *)      exit 1 ;;
esac
[ -z "$TP" ] && TP=8
test $LAYERS -gt 40 || LAYERS=1
python pretrain_gpt.py --num-layers $LAYERS --hidden-size $HIDDEN --tp $TP
"#;
    let c = command(s);
    assert_eq!((value(&c, "--num-layers"), value(&c, "--hidden-size")), (Some("80"), Some("8192")));
    // `[ -z "$TP" ]` on a variable of the environment: read, with a note.
    assert_eq!(value(&c, "--tp"), Some("8"));
    assert!(!c.notes.iter().any(|n| n.starts_with("`if") || n.starts_with("`case")), "{:?}", c.notes);
    assert!(c.notes.iter().any(|n| n.contains("line 15") && n.contains("TP not set")), "{:?}", c.notes);
}

#[test]
fn conditions_on_unset_variables_read_every_branch_with_a_note() {
    let s = "if [ $MODEL_SIZE = 7B ]; then\n  L=32\nelif [ $MODEL_SIZE = 70B ]; then\n  L=80\nelse\n  exit 1\nfi\n\
             case $SIZE in\n  small) H=1024 ;;\n  big) H=8192 ;;\nesac\npython pretrain_gpt.py --num-layers $L --hidden-size $H\n";
    let c = command(s);
    assert_eq!((value(&c, "--num-layers"), value(&c, "--hidden-size")), (Some("80"), Some("8192")));
    let note = c.notes.iter().find(|n| n.contains("`if [ $MODEL_SIZE = 7B ]`")).expect("a note on the if");
    assert!(note.contains("MODEL_SIZE not set") && note.contains("the last value fmperf can read wins"), "{note}");
    assert!(c.notes.iter().any(|n| n.contains("case $SIZE") && n.contains("every branch")), "{:?}", c.notes);
    // A branch whose value holds an unknown keeps the known value of an earlier branch.
    let s = "if [ -z ${VP} ]; then\n  OPT=\"\"\nelse\n  OPT=\"--vpp ${VP}\"\nfi\npython x.py --a 1 $OPT\n";
    assert_eq!(texts(&command(s)), ["--a", "1"]);
}

#[test]
fn functions_loops_and_positional_parameters() {
    let s = r#"
set_size() {
    local size=$1
    case $size in
        8b) LAYERS=32 ;;
        70b) LAYERS=80 ;;
    esac
    shift
    EXTRA="$@"
}
MODEL=$1
shift
while [[ $# -gt 0 ]]; do
    case $1 in
        --tp) TP="$2"; shift 2 ;;
        --nodes) NODES=$2; shift; shift ;;
        *) echo "unknown $1"; shift ;;
    esac
done
set_size $MODEL --x 1
ARGS=""
for f in --bf16 --swiglu; do ARGS="$ARGS $f"; done
torchrun --nnodes ${NODES:-1} --nproc_per_node 8 pretrain_gpt.py --num-layers $LAYERS --tp ${TP:-1} $ARGS $EXTRA --n $#
"#;
    let c = read(s, &args(&["70b", "--tp", "8", "--nodes", "4", "--junk"]), &|_| true).unwrap();
    assert_eq!(value(&c, "--num-layers"), Some("80"));
    assert_eq!(value(&c, "--tp"), Some("8"));
    assert_eq!(value(&c, "--x"), Some("1"));
    assert_eq!(value(&c, "--n"), Some("0"));
    assert!(texts(&c).contains(&"--bf16") && texts(&c).contains(&"--swiglu"));
    assert_eq!(c.launcher.iter().map(|w| w.text.as_str()).nth(2), Some("4"));
}

#[test]
fn a_missing_positional_parameter_is_named() {
    let s = "TP=$1\nPP=${2:-1}\nLAYERS=$3\npython pretrain_gpt.py --tensor-model-parallel-size $TP --pipeline-model-parallel-size $PP --num-layers $LAYERS --hidden-size 64 --num-attention-heads 4\n";
    let e = parse_args(s, &[]).unwrap_err().to_string();
    assert!(e.contains("--tensor-model-parallel-size") && e.contains("needs positional argument $1"), "{e}");
    assert!(e.contains("give it after --"), "{e}");
    let e = parse_args(s, &args(&["4"])).unwrap_err().to_string();
    // Given arguments beyond `$#` are empty, as in bash: `--num-layers` has no value then.
    assert!(e.contains("--num-layers"), "{e}");
    let l = parse_args(s, &args(&["4", "2", "24"])).unwrap();
    assert_eq!(
        (l.settings.tp.copied(), l.settings.pp.copied(), l.settings.layers.copied()),
        (Some(4), Some(2), Some(24))
    );
    // An environment variable names itself.
    let e = parse_args("python pretrain_gpt.py --num-layers ${NUM_LAYERS}", &[]).unwrap_err().to_string();
    assert!(e.contains("NUM_LAYERS is not set"), "{e}");
}

#[test]
fn here_documents_sbatch_and_files_written_then_run() {
    let s = "#!/bin/bash\nNODES=${NODES:-2}\nsbatch <<EOF\n#!/bin/bash\n#SBATCH --nodes=$NODES\n\
             srun torchrun --nnodes $NODES --nproc_per_node 8 pretrain_gpt.py --num-layers 4\nEOF\n";
    let c = command(s);
    assert_eq!(value(&c, "--num-layers"), Some("4"));
    assert_eq!(
        c.launcher.iter().map(|w| w.text.as_str()).collect::<Vec<_>>()[..4],
        ["srun", "torchrun", "--nnodes", "2"]
    );
    let s =
        "read -r -d '' X <<'EOF'\n--num-layers $L\nEOF\nL=9\ncat <<EOF > /dev/null\nignored --x\nEOF\npython x.py $X\n";
    assert_eq!(value(&command(s), "--num-layers"), Some("$L"), "a quoted delimiter: the body as written");
    let s = "L=9\ncat > run.sh <<EOF\npython pretrain_gpt.py --num-layers $L\nEOF\nbash run.sh\n";
    assert_eq!(value(&command(s), "--num-layers"), Some("9"));
    let s = "read -r -d '' CMDS <<EOF\nmy.train --lr 1 \\\n  --layers 3\nEOF\ndeepspeed --module $CMDS\n";
    let c = command(s);
    assert_eq!(c.script.as_ref().map(|w| w.text.as_str()), Some("my.train"));
    assert_eq!(value(&c, "--layers"), Some("3"));
}

#[test]
fn the_training_command_among_several() {
    let s = "python tools/preprocess_data.py --input a.json --output-prefix a\n\
             torchrun pretrain_gpt.py --num-layers 2 --hidden-size 64\n\
             python tools/checkpoint/convert.py --load-dir x --save-dir y\n";
    let c = parse_args(s, &[]).unwrap();
    assert_eq!(c.settings.layers.copied(), Some(2));
    let c = command("python -m torch.distributed.run --nproc_per_node 2 -m my_pkg.train --a 1");
    assert_eq!(c.script.as_ref().map(|w| w.text.as_str()), Some("my_pkg.train"));
    let c = command("accelerate launch --num_processes 8 --config_file cfg.yaml finetune.py --x 1");
    assert_eq!(c.script.as_ref().map(|w| w.text.as_str()), Some("finetune.py"));
}

#[test]
fn a_variable_doubling_bomb_is_refused_quickly() {
    let mut s = String::from("A0=x\n");
    for i in 1..=39 {
        s.push_str(&format!("A{i}=\"$A{p} $A{p}\"\n", p = i - 1));
    }
    s.push_str("python pretrain_gpt.py --x $A39\n");
    let t = Instant::now();
    let e = read(&s, &[], &|_| true).unwrap_err().to_string();
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    assert!(e.contains("cap") && e.contains("bytes"), "{e}");
    // The same through an array and a function called recursively.
    let e = read("f() { f; }\nf\n", &[], &|_| true).unwrap_err().to_string();
    assert!(e.contains("nested deeper"), "{e}");
    let e = read("while true; do :; done\n", &[], &|_| true).unwrap_err().to_string();
    assert!(e.contains("iterations"), "{e}");
    let e = read(&"{ ".repeat(5000), &[], &|_| true).unwrap_err().to_string();
    assert!(e.contains("nests"), "{e}");
}

#[test]
fn hostile_text_never_panics_and_stays_bounded() {
    let t0 = Instant::now();
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let alphabet: Vec<char> = "$`'\"\\(){}[];|&<>#=:-+*/%!?@ \n\tabcXYZ019_.~^,".chars().collect();
    for round in 0..300 {
        let len = 1 + (round * 37) % 400;
        let s: String = (0..len)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                alphabet[(state % alphabet.len() as u64) as usize]
            })
            .collect();
        let _ = read(&s, &args(&["a", "b"]), &|_| true);
        let _ = parse_args(&s, &[]);
    }
    eprintln!("random: {:?}", t0.elapsed());
    // Ten megabytes of text and binary junk.
    let t = Instant::now();
    let big = "X=1 # comment\n".repeat(700_000);
    let _ = read(&big, &[], &|_| true);
    eprintln!("big: {:?}", t.elapsed());
    let junk: String = (0..200_000u32).map(|i| char::from_u32(i % 0xD7FF).unwrap_or('?')).collect();
    let _ = read(&junk, &[], &|_| true);
    assert!(t.elapsed() < Duration::from_secs(60), "{:?}", t.elapsed());
}

#[test]
fn argument_loops_without_arguments_keep_the_defaults() {
    // Without arguments `$#` and `$1` are unknown: the loop's body is read once, and a branch
    // that assigns an unknown value leaves the variable to its default.
    let s = r#"
while [[ $# -gt 0 ]]; do
  case $1 in
    --tp) TP=$2; shift 2 ;;
    --mbs) MBS="$2"; shift 2 ;;
    *) shift ;;
  esac
done
TP=${TP:-8}
python pretrain_gpt.py --tp $TP --mbs ${MBS:-2}
"#;
    let c = command(s);
    assert_eq!((value(&c, "--tp"), value(&c, "--mbs")), (Some("8"), Some("2")));
    assert!(c.notes.iter().any(|n| n.contains("while")), "{:?}", c.notes);
    let c = read(s, &args(&["--tp", "4"]), &|_| true).unwrap();
    assert_eq!((value(&c, "--tp"), value(&c, "--mbs")), (Some("4"), Some("2")));
}

#[test]
fn other_bombs_are_refused() {
    // Arrays of empty elements doubling, a replacement that grows, deeply nested defaults.
    let mut s = String::from("A=(\"\")\n");
    for _ in 0..40 {
        s.push_str("A=(\"${A[@]}\" \"${A[@]}\")\n");
    }
    let e = read(&s, &[], &|_| true).unwrap_err().to_string();
    assert!(e.contains("cap"), "{e}");
    let s =
        "A=xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\nfor i in 1 2 3 4 5 6 7 8 9 10; do A=${A//x/xxxxxxxxxx}; done\n";
    let e = read(s, &[], &|_| true).unwrap_err().to_string();
    assert!(e.contains("cap"), "{e}");
    let s = format!("X={}1{}\n", "${A:-".repeat(50_000), "}".repeat(50_000));
    let e = read(&s, &[], &|_| true).unwrap_err().to_string();
    assert!(e.contains("nested"), "{e}");
}

#[test]
fn slices_of_the_arguments_and_arrays() {
    let s = "MODEL=$1\nA=(--x 1 --y 2)\npython train.py \"${@:2}\" ${A[@]:2} --n ${#A[@]}\n";
    let c = read(s, &args(&["llama", "--tp", "4"]), &|_| true).unwrap();
    assert_eq!(texts(&c), ["--tp", "4", "--y", "2", "--n", "4"]);
}
