//! The cluster examples in `examples/` run locally: `gnu-parallel.sh` (n shards through GNU
//! parallel, merged) and `slurm-array.sbatch` (each array task run as plain bash with the variables
//! Slurm would set, then `merge-shards.sh`) give the unsharded sweep's output byte for byte, in
//! CSV and JSON Lines. GNU parallel is installed by `scripts/setup.sh`; where it is missing outside
//! CI the parallel test says so and skips, in CI it fails.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const SWEEP: &[&str] = &["--model", "vit_era5", "--system", "B200", "--axis", "nvlink=8,64", "--axis", "gpus=16..512"];

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("fmperf-cluster-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn ok(out: Output, what: &str) -> String {
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{what} failed ({:?}): {err}", out.status.code());
    String::from_utf8(out.stdout).unwrap()
}

/// The unsharded, single-threaded sweep in `format`.
fn whole(format: &str) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_fmperf"))
        .arg("sweep")
        .args(SWEEP)
        .args(["--format", format, "--threads", "1"])
        .output()
        .unwrap();
    ok(out, "fmperf sweep")
}

fn example(script: &str) -> Command {
    let mut c = Command::new("bash");
    c.arg(repo().join("examples").join(script)).env("FMPERF", env!("CARGO_BIN_EXE_fmperf"));
    c
}

fn have_parallel() -> bool {
    Command::new("parallel").arg("--version").output().map(|o| o.status.success()).unwrap_or(false)
}

#[test]
fn gnu_parallel_shards_concatenate_to_the_whole_sweep() {
    if !have_parallel() {
        assert!(
            std::env::var_os("CI").is_none(),
            "GNU parallel is missing in CI: scripts/setup.sh installs it (apt-get install parallel)"
        );
        eprintln!(
            "SKIPPED gnu_parallel_shards_concatenate_to_the_whole_sweep: GNU parallel is not installed (run scripts/setup.sh or apt-get install parallel)"
        );
        return;
    }
    let dir = scratch("parallel");
    for (format, file) in [("csv", "sweep.csv"), ("json", "sweep.jsonl")] {
        let out = dir.join(file);
        let run = example("gnu-parallel.sh")
            .args(["-n", "5", "-j", "2", "-o", out.to_str().unwrap(), "--"])
            .args(SWEEP)
            .args(["--format", format])
            .output()
            .unwrap();
        ok(run, "gnu-parallel.sh");
        let merged = std::fs::read_to_string(&out).unwrap();
        assert_eq!(merged, whole(format), "{format}");
        let parts = std::fs::read_dir(dir.join(format!("{file}.parts"))).unwrap().count();
        assert_eq!(parts, 5 + 2, "five parts, the job log and the sweep's record");
    }
    // Without --format csv|json the script refuses (a table does not concatenate).
    let run =
        example("gnu-parallel.sh").args(["-o", dir.join("t").to_str().unwrap(), "--"]).args(SWEEP).output().unwrap();
    assert_eq!(run.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&run.stderr).contains("--format csv"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn slurm_array_tasks_and_the_merge_give_the_whole_sweep() {
    let dir = scratch("slurm");
    let n = 4;
    for (format, ext) in [("csv", "csv"), ("json", "jsonl")] {
        let parts = dir.join(format!("parts-{ext}"));
        // Tasks in any order, as a scheduler runs them.
        for i in [2, 0, 3, 1] {
            let run = example("slurm-array.sbatch")
                .args(SWEEP)
                .args(["--format", format])
                .env("PARTS_DIR", &parts)
                .env("SLURM_ARRAY_TASK_ID", i.to_string())
                .env("SLURM_ARRAY_TASK_MIN", "0")
                .env("SLURM_ARRAY_TASK_MAX", (n - 1).to_string())
                .env("SLURM_CPUS_PER_TASK", "2")
                .output()
                .unwrap();
            ok(run, "slurm-array.sbatch");
        }
        let merged = dir.join(format!("sweep.{ext}"));
        let run = Command::new("bash")
            .arg(repo().join("examples/merge-shards.sh"))
            .args([parts.to_str().unwrap(), &n.to_string(), merged.to_str().unwrap()])
            .output()
            .unwrap();
        ok(run, "merge-shards.sh");
        assert_eq!(std::fs::read_to_string(&merged).unwrap(), whole(format), "{format}");
    }
    // Parts of another sweep (other flags) are never mixed in: the task refuses the folder.
    let run = example("slurm-array.sbatch")
        .args(["--model", "gpt3", "--system", "B200", "--axis", "gpus=64,128", "--format", "csv"])
        .env("PARTS_DIR", dir.join("parts-csv"))
        .env("SLURM_ARRAY_TASK_ID", "0")
        .env("SLURM_ARRAY_TASK_MAX", (n - 1).to_string())
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&run.stderr).contains("parts of another sweep"), "{run:?}");
    // A missing part is an error naming it, not a shorter result.
    std::fs::remove_file(dir.join("parts-csv/part-000002.csv")).unwrap();
    let run = Command::new("bash")
        .arg(repo().join("examples/merge-shards.sh"))
        .args([dir.join("parts-csv").to_str().unwrap(), "4", dir.join("again.csv").to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&run.stderr).contains("shards 2"), "{}", String::from_utf8_lossy(&run.stderr));
    assert!(!dir.join("again.csv").exists());
    let _ = std::fs::remove_dir_all(&dir);
}
