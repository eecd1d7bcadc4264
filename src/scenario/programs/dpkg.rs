//! `dpkg`: dpkg upgrading a set of real packages (built with `dpkg-deb`
//! by the stage) in a scratch root (`--root`), with or without
//! `--force-unsafe-io`: seed 002's program itself, its fsyncs' cost
//! beside what the switch that drops them loses in a crash. Each crash
//! state is judged by dpkg's own tools (`dpkg_check.sh`).

use super::{Program, Vars};
use crate::scenario::params::{ParamKind, ParamSpec, Params};

const PARAMS: [ParamSpec; 3] = [
    ParamSpec {
        name: "packages",
        kind: ParamKind::Count { max: 200 },
        small: "3",
        full: "10",
        seed: "-",
        about: "packages upgraded in one dpkg call",
    },
    ParamSpec {
        name: "files",
        kind: ParamKind::Count { max: 2_000 },
        small: "20",
        full: "20",
        seed: "20 (seed 002's package)",
        about: "files of 16 KiB in each package, every one replaced by the upgrade",
    },
    ParamSpec {
        name: "unsafe_io",
        kind: ParamKind::Choice(&["no", "yes"]),
        small: "no",
        full: "no",
        seed: "no",
        about: "yes: --force-unsafe-io (dpkg skips its fsyncs before each rename)",
    },
];

/// The scenario.
pub static DPKG: Program = Program {
    name: "dpkg",
    about: "dpkg upgrades packages in a scratch root, with or without --force-unsafe-io; cost beside crash safety",
    params: &PARAMS,
    scripts: super::scripts!("dpkg"),
    vars,
};

/// A case's variables and the bytes it needs.
fn vars(params: &Params) -> Vars {
    let (packages, files) = (params.number("packages"), params.number("files"));
    // Both versions' packages and the installed files, with room.
    let space = packages * files * 16384 * 3;
    let vars = vec![
        ("PACKAGES", packages.to_string()),
        ("FILES", files.to_string()),
        ("UNSAFE_IO", params.word("unsafe_io").to_string()),
    ];
    (vars, space)
}
