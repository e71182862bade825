//! Unit tests of the shell evaluator.

use super::*;

fn arith_(e: &str) -> Option<i128> {
    arith::eval(e, &|_| None)
}

fn texts(ws: &[Word]) -> Vec<&str> {
    ws.iter().map(|w| w.text.as_str()).collect()
}

#[test]
fn continuations_variables_and_arrays() {
    let s = r#"#!/bin/bash
#SBATCH --nodes=4
GPUS_PER_NODE=8
TP=${TP:-4}
export PP=2
MODEL_ARGS=(
--num-layers 32   # depth
--hidden-size 4096
)
EXTRA="--bf16 --swiglu"
WORLD=$((GPUS_PER_NODE * 4))
torchrun --nproc_per_node $GPUS_PER_NODE pretrain_gpt.py \
--tensor-model-parallel-size $TP \
--pipeline-model-parallel-size=${PP} \
${MODEL_ARGS[@]} $EXTRA \
--micro-batch-size "$MBS" --world $WORLD \
--log-dir '/tmp/a b'
"#;
    let c = command(s);
    assert_eq!(texts(&c.launcher), ["torchrun", "--nproc_per_node", "8"]);
    assert_eq!(c.script.as_ref().unwrap().text, "pretrain_gpt.py");
    assert_eq!(
        texts(&c.args),
        [
            "--tensor-model-parallel-size",
            "4",
            "--pipeline-model-parallel-size=2",
            "--num-layers",
            "32",
            "--hidden-size",
            "4096",
            "--bf16",
            "--swiglu",
            "--micro-batch-size",
            "$MBS",
            "--world",
            "32",
            "--log-dir",
            "/tmp/a b"
        ]
    );
    assert_eq!(c.args[0].line, 13);
    assert_eq!(texts(&c.sbatch), ["--nodes=4"]);
}

#[test]
fn pasted_flags_and_arithmetic() {
    let c = command("--num-layers 2 --hidden-size=64\n--bf16");
    assert!(c.script.is_none());
    assert_eq!(texts(&c.args), ["--num-layers", "2", "--hidden-size=64", "--bf16"]);
    assert_eq!(arith_("2*(3+4)-1"), Some(13));
    assert_eq!(arith_("8/0"), None);
    assert_eq!(arith_("$X*2"), None);
    // Unclosed quotes and parentheses never panic.
    let c = command("A=(\n--x 1\nB=\"open\npython pretrain_gpt.py --y");
    assert!(c.script.is_none() || !c.args.is_empty() || c.args.is_empty());
    let _ = command("$((((( ${ } $( \\");
}

#[test]
fn a_command_string_run_by_bash_is_read() {
    let s = "#SBATCH --nodes=48   # nodes\n#SBATCH --gres=gpu:8\nNNODES=$SLURM_NNODES\n\
             ARGS=\" \\\n    --num-layers 70 \\\n    --pp-partition-method 'type:transformer|embedding' \\\n    \"\n\
             LAUNCHER=\"python -m torch.distributed.run --nnodes $NNODES\"\n\
             CMD=\" `pwd`/pretrain_gpt.py $ARGS\"\n\
             srun --jobid 1 bash -c \"$LAUNCHER --node_rank \\$SLURM_PROCID $CMD\" 2>&1 | tee log.txt\n";
    let c = command(s);
    assert_eq!(c.script.as_ref().map(|w| w.text.as_str()), Some("`pwd`/pretrain_gpt.py"));
    assert_eq!(
        texts(&c.launcher),
        ["python", "-m", "torch.distributed.run", "--nnodes", "48", "--node_rank", "$SLURM_PROCID"]
    );
    assert_eq!(texts(&c.args), ["--num-layers", "70", "--pp-partition-method", "type:transformer|embedding"]);
    assert!(c.args.iter().all(|w| w.line == 10), "the words of the string are on the srun line");
    // A script that sets the variable itself keeps its value; `-N 2` is read too.
    let c = command("#SBATCH -N 2\nSLURM_NNODES=3\ntorchrun --nnodes $SLURM_NNODES --nproc_per_node 8 x.py --a 1");
    assert_eq!(texts(&c.launcher)[2], "3");
    let c = command("#SBATCH -N 2\ntorchrun --nnodes $SLURM_JOB_NUM_NODES x.py");
    assert_eq!(texts(&c.launcher)[2], "2");
}

#[test]
fn defaults_and_unset_variables() {
    let c = command("A=${UNSET:-7}\nB=${A}0\npython x.py --a $A --b $B --c ${NOPE} --d $(hostname)");
    assert_eq!(texts(&c.args), ["--a", "7", "--b", "70", "--c", "${NOPE}", "--d", "$(hostname)"]);
}
