//! The layering test: no module imports one above it. Each top-level
//! module of `src/` may name (as `crate::X`) only the modules listed for
//! it here; the list is the layering `docs/DESIGN.md` draws, and this test
//! is what keeps the two the same.

use std::collections::BTreeSet;
use std::path::Path;

/// Each module and what it may use, lowest first. `record`, `error`,
/// `units`, `text` and `interrupt` are the foundation every layer may use.
const ALLOWED: &[(&str, &[&str])] = &[
    ("sys", &[]),
    ("text", &[]),
    ("error", &["text"]),
    ("units", &[]),
    ("interrupt", &["error", "sys"]),
    ("progress", &["text"]),
    ("record", &["error", "units", "text"]),
    ("model", &["error", "units", "text"]),
    ("layout", &["model", "sys", "record", "error", "units", "text"]),
    ("ledger", &["layout", "sys", "record", "error", "units", "text", "interrupt", "progress"]),
    // Distribution kernel packages (`debian:NAME`): apt's catalog, the
    // fetch into the kernel cache, held to the ledger's folder rule.
    ("distro", &["ledger", "sys", "record", "error", "units", "text", "interrupt", "progress"]),
    ("age_cache", &["ledger", "sys", "record", "error", "units", "text", "interrupt"]),
    ("crash", &["age_cache", "record", "error", "units", "text"]),
    ("site", &["crash", "age_cache", "ledger", "layout", "sys", "record", "error", "units", "text", "interrupt", "progress"]),
    ("probe", &["site", "ledger", "layout", "model", "sys", "record", "error", "units", "text", "interrupt"]),
    ("scenario", &["probe", "site", "age_cache", "ledger", "layout", "sys", "record", "error", "units", "text", "interrupt"]),
    ("age", &["scenario", "probe", "site", "ledger", "layout", "sys", "record", "error", "units", "text", "interrupt"]),
    ("vm", &["site", "age_cache", "ledger", "sys", "record", "error", "units", "text", "interrupt"]),
    ("store", &["record", "error", "units", "text"]),
    ("compare", &["store", "record", "error", "units", "text"]),
    ("history", &["compare", "store", "record", "error", "units", "text"]),
    ("report", &["history", "compare", "store", "record", "error", "units", "text"]),
    (
        "harness",
        &[
            "age", "vm", "scenario", "probe", "site", "crash", "age_cache", "ledger", "layout", "model", "sys", "store", "record",
            "error", "units", "text", "interrupt", "progress",
        ],
    ),
    // The plan: requests the command line fills, turned into the harness's
    // plan and the list of cases; it never names `cli`.
    ("plan", &["harness", "age", "vm", "distro", "scenario", "site", "age_cache", "ledger", "model", "record", "error", "units", "text"]),
    // The bisect: judges points of an ordered axis, chooses the next and
    // measures each as a run (through the plan); `cli` reads its flags.
    ("bisect", &["plan", "harness", "compare", "store", "record", "error", "units", "text", "interrupt", "ledger", "progress", "sys"]),
];

/// The modules `crate::X` names in one file's code (comments skipped).
fn named_modules(text: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for line in text.lines().map(str::trim_start).filter(|l| !l.starts_with("//")) {
        let mut rest = line;
        while let Some(at) = rest.find("crate::") {
            rest = &rest[at + "crate::".len()..];
            let name: String = rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
            // `crate::{a, b}` is not used in this code base; a name is a module.
            if !name.is_empty() {
                names.insert(name);
            }
        }
    }
    names
}

fn files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Every `.rs` file below `src/`, as `(path, path relative to src/)`.
fn sources() -> Vec<(std::path::PathBuf, std::path::PathBuf)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut all = Vec::new();
    files(&src, &mut all);
    all.into_iter().map(|path| (path.clone(), path.strip_prefix(&src).unwrap().to_path_buf())).collect()
}

#[test]
fn no_module_imports_one_above_it() {
    let mut wrong = Vec::new();
    for (path, rel) in &sources() {
        let top = rel.components().next().unwrap().as_os_str().to_string_lossy().trim_end_matches(".rs").to_string();
        if ["lib", "main", "cli"].contains(&top.as_str()) {
            continue; // the command line may use everything
        }
        let allowed = ALLOWED.iter().find(|(m, _)| *m == top).map(|(_, a)| *a);
        let Some(allowed) = allowed else {
            wrong.push(format!("{}: module `{top}` has no place in the layering test", rel.display()));
            continue;
        };
        for name in named_modules(&std::fs::read_to_string(path).unwrap()) {
            // `test_temp` is the tests' folder names, in test builds only.
            let anywhere = ["SCHEMA", "json_document", "test_temp"];
            if name != top && !allowed.contains(&name.as_str()) && !anywhere.contains(&name.as_str()) {
                wrong.push(format!("{}: `{top}` uses `crate::{name}`", rel.display()));
            }
        }
    }
    assert!(wrong.is_empty(), "imports against the layering:\n{}", wrong.join("\n"));
}

#[test]
fn the_scanner_sees_code_and_skips_comments() {
    let text = "use crate::record::Case;\n// crate::cli in a comment\nlet x = crate::units::bytes(1);\n";
    let names: Vec<String> = named_modules(text).into_iter().collect();
    assert_eq!(names, ["record", "units"]);
}

#[test]
fn the_table_is_one_way() {
    // Lowest first: a module may list only modules above it in the table,
    // so no two rooms can name each other, however far apart.
    for (at, (module, allowed)) in ALLOWED.iter().enumerate() {
        for name in *allowed {
            let below = ALLOWED[..at].iter().any(|(m, _)| m == name);
            assert!(below, "`{module}` may name `{name}`, which is not below it in the table");
        }
    }
}

#[test]
fn no_room_is_named_target_and_no_file_passes_800_lines() {
    // `target` is also cargo's build folder, which tools that skip build
    // output skip whole.
    let mut wrong = Vec::new();
    for (path, rel) in &sources() {
        if rel.components().any(|c| c.as_os_str() == "target") {
            wrong.push(format!("{}: in a folder named target", rel.display()));
        }
        let lines = std::fs::read_to_string(path).unwrap().lines().count();
        if lines > 800 {
            wrong.push(format!("{}: {lines} lines (at most 800)", rel.display()));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
