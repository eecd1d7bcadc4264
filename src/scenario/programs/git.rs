//! `git`: git init and a run of commits in the work's folder, with
//! `core.fsync` and `core.fsyncMethod` as a case sets them: what a commit
//! costs in flushes beside whether it survives a crash, each state judged
//! by git itself (`git fsck`, and every commit marked durable on the
//! branch; `git_check.sh`).

use super::{Program, Vars};
use crate::scenario::params::{ParamKind, ParamSpec, Params};

const PARAMS: [ParamSpec; 4] = [
    ParamSpec {
        name: "commits",
        kind: ParamKind::Count { max: 1_000 },
        small: "3",
        full: "10",
        seed: "-",
        about: "commits, each of one new 4 KiB file",
    },
    ParamSpec {
        name: "fsync",
        kind: ParamKind::Choice(&["default", "committed", "all"]),
        small: "default",
        full: "default",
        seed: "-",
        about: "core.fsync (default: git's own, which syncs nothing)",
    },
    ParamSpec {
        name: "method",
        kind: ParamKind::Choice(&["fsync", "batch"]),
        small: "fsync",
        full: "fsync",
        seed: "-",
        about: "core.fsyncMethod: fsync each file, or batch (one flush for many objects)",
    },
    ParamSpec {
        name: "gap_s",
        kind: ParamKind::Choice(&["0", "2", "6"]),
        small: "0",
        full: "0",
        seed: "-",
        about: "seconds between commits (6: ext4's 5 s journal commit falls between them)",
    },
];

/// The scenario.
pub static GIT: Program = Program {
    name: "git",
    about: "git init and commits with core.fsync default, committed or all; cost beside crash safety",
    params: &PARAMS,
    scripts: super::scripts!("git"),
    vars,
};

/// A case's variables and the bytes it needs.
fn vars(params: &Params) -> Vars {
    let commits = params.number("commits");
    // Each commit: its file, blob, tree and commit objects, a ref and
    // the index; the repository's own files besides.
    let space = (1 << 20) + commits * 64 * 1024;
    let vars = vec![
        ("COMMITS", commits.to_string()),
        ("FSYNC", params.word("fsync").to_string()),
        ("METHOD", params.word("method").to_string()),
        ("GAP_S", params.word("gap_s").to_string()),
    ];
    (vars, space)
}
