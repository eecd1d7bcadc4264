//! The job engines' examples (`examples/slurm-seeds.sbatch`,
//! `examples/k8s-seeds-job.yaml`, `examples/ci-matrix.yml`) run with this
//! fslab, so they cannot rot: every fslab command in each, comments
//! included, is run as it is written, in a folder of its own with the
//! variables the example names set and the engine's index unset. `plan`
//! must write its plan; `run --plan` must read that plan and take every
//! flag, then stop at the index only the engine sets (exit 2, naming it),
//! before anything is made; `status` must read the plan and find every
//! case missing from a store no shard has written yet. (tests/shard_slurm.rs submits the Slurm
//! script itself to a real cluster.)
//!
//! A command is a word `fslab` (or a path ending in `/fslab`) followed by
//! one of fslab's commands, the rest of its line its arguments as a shell
//! reads them; in a YAML exec array (`["fslab", "run", ...]`) the array's
//! words. A GitHub expression (`${{ matrix.shard }}`) is no shell's and
//! stands for `0`.

mod common;

use std::path::Path;
use std::process::Command;

/// fslab's commands, from `fslab --help`.
fn commands() -> Vec<String> {
    let help = common::run(env!("CARGO_BIN_EXE_fslab"), &["--help"]);
    let listed = help.split("Commands:").nth(1).expect("a Commands: list in fslab --help");
    listed
        .lines()
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next().map(String::from))
        .filter(|c| c != "help")
        .collect()
}

/// The fslab commands of an example's text, each as a shell command line
/// (`"$FSLAB" ARGS`), with the line it is on.
fn fslab_commands(text: &str, commands: &[String]) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.replace("${{ matrix.shard }}", "0");
        if let Some(at) = line.find("[\"fslab\"") {
            let end = line[at..].find(']').expect("a closed exec array") + at;
            let words: Vec<String> = serde_json::from_str(&line[at..=end]).expect("an exec array of strings");
            let quoted: Vec<String> = words[1..].iter().map(|w| format!("'{}'", w.replace('\'', r"'\''"))).collect();
            found.push((i + 1, format!("\"$FSLAB\" {}", quoted.join(" "))));
            continue;
        }
        let words: Vec<&str> = line.split_whitespace().collect();
        for (w, word) in words.iter().enumerate() {
            let is_fslab = *word == "fslab" || word.ends_with("/fslab");
            if is_fslab && words.get(w + 1).is_some_and(|next| commands.iter().any(|c| c == next)) {
                let rest = &line[line.find(&format!("{word} {}", words[w + 1])).unwrap() + word.len()..];
                found.push((i + 1, format!("\"$FSLAB\"{rest}")));
                break;
            }
        }
    }
    found
}

/// The fslab command a command line runs (`plan`, `run`...).
fn kind(command: &str) -> &str {
    command.split_whitespace().nth(1).unwrap_or_default().trim_matches('\'')
}

#[test]
fn every_fslab_command_of_each_engine_s_example_runs_with_this_fslab() {
    let commands = commands();
    assert!(commands.iter().any(|c| c == "plan") && commands.iter().any(|c| c == "status"), "{commands:?}");
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    for (example, index) in
        [("slurm-seeds.sbatch", "SLURM_ARRAY_TASK_ID"), ("k8s-seeds-job.yaml", "JOB_COMPLETION_INDEX"), ("ci-matrix.yml", "FSLAB_SHARD")]
    {
        let text = std::fs::read_to_string(examples.join(example)).unwrap();
        let found = fslab_commands(&text, &commands);
        let kinds: Vec<&str> = found.iter().map(|(_, c)| kind(c)).collect();
        // Each shows the whole way: the plan, its shards, what the store holds.
        for kind in ["plan", "run", "status"] {
            assert_eq!(kinds.iter().filter(|k| **k == kind).count(), 1, "{example}: one {kind} in {found:?}");
        }
        let dir = common::temp::dir("examples");
        // The shared store, made and empty, as before any shard ran.
        let store = dir.path().join("store.db");
        drop(fslab::store::Store::open(store.to_str().unwrap()).unwrap());
        let mut ordered = found.clone();
        ordered.sort_by_key(|(_, c)| ["plan", "run", "status"].iter().position(|k| kind(c) == *k));
        for (line, command) in &ordered {
            let out = Command::new("bash")
                .args(["-c", command])
                .current_dir(dir.path())
                .env("FSLAB", env!("CARGO_BIN_EXE_fslab"))
                .env("PLAN", "seeds.plan")
                .env("SHARDS", "8")
                .env("FSLAB_STORE", &store)
                .env("FSLAB_STATE_DIR", dir.path().join("state"))
                .env("FSLAB_SCRATCH", dir.path().join("scratch"))
                .env_remove(index)
                .output()
                .unwrap();
            let said = format!("{example}:{line}: {command}\n{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
            match kind(command) {
                "plan" => {
                    assert_eq!(out.status.code(), Some(0), "{said}");
                    assert!(dir.path().join("seeds.plan").is_file(), "no plan written: {said}");
                }
                "run" => {
                    assert_eq!(out.status.code(), Some(2), "{said}");
                    assert!(said.contains(&format!("--shard: {index} is not set")), "{said}");
                }
                _ => {
                    // No shard ran: every case missing, the plan unfinished.
                    assert_eq!(out.status.code(), Some(6), "{said}");
                    assert!(said.contains(" cases: 0 done, 0 failed, "), "{said}");
                }
            }
        }
        let mut left = common::names(dir.path());
        left.retain(|n| n != "seeds.plan" && !n.starts_with("store.db"));
        assert_eq!(left, Vec::<String>::new(), "{example}: something was made beside the plan");
    }
}

#[test]
fn a_flag_fslab_lacks_in_an_example_is_caught() {
    let commands = commands();
    let text = "# how:\n#   fslab plan --preset seeds -o seeds.plan\n  command: [\"fslab\", \"run\", \"--plan\", \"seeds.plan\", \"--shards\", \"k8s/8\"]\n\
                the same fslab that made the plan\n      - run: ./fslab status seeds.plan\n";
    let found = fslab_commands(text, &commands);
    assert_eq!(
        found,
        vec![
            (2, "\"$FSLAB\" plan --preset seeds -o seeds.plan".to_string()),
            (3, "\"$FSLAB\" 'run' '--plan' 'seeds.plan' '--shards' 'k8s/8'".to_string()),
            (5, "\"$FSLAB\" status seeds.plan".to_string()),
        ]
    );
    let out = Command::new("bash").args(["-c", &found[1].1]).env("FSLAB", env!("CARGO_BIN_EXE_fslab")).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--shards"), "{}", String::from_utf8_lossy(&out.stderr));
}
