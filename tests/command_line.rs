//! The command line's own outputs: `--version` with the commit, shell
//! completion and man pages generated from the clap definitions, and
//! "did you mean" for mistyped scenario names and `--set` keys.

mod common;

use std::process::Command;

use common::{Lab, fslab_expect};

fn stdout(args: &[&str]) -> String {
    String::from_utf8(fslab_expect(args, 0).stdout).unwrap()
}

#[test]
fn version_names_the_git_commit() {
    let text = stdout(&["--version"]);
    let prefix = format!("fslab {} (", env!("CARGO_PKG_VERSION"));
    assert!(text.starts_with(&prefix) && text.trim_end().ends_with(')'), "{text}");
    let commit = &text.trim_end()[prefix.len()..text.trim_end().len() - 1];
    let git = Command::new("git").args(["rev-parse", "--short", "HEAD"]).current_dir(env!("CARGO_MANIFEST_DIR")).output();
    match git {
        Ok(out) if out.status.success() => {
            let head = String::from_utf8(out.stdout).unwrap();
            assert!(commit.starts_with(head.trim()), "--version says {commit}, HEAD is {head}");
        }
        _ => assert_eq!(commit, "unknown"),
    }
}

#[test]
fn completions_are_generated_for_each_shell() {
    let bash = stdout(&["completions", "bash"]);
    assert!(bash.contains("_fslab()") && bash.contains("--units") && bash.contains("compare"), "{}", &bash[..200]);
    assert!(stdout(&["completions", "zsh"]).starts_with("#compdef fslab"));
    assert!(stdout(&["completions", "fish"]).contains("complete -c fslab"));
    let out = fslab_expect(&["completions", "tcsh"], 2);
    assert!(String::from_utf8_lossy(&out.stderr).contains("possible values"), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn man_pages_are_generated_from_the_command_line() {
    let page = stdout(&["man"]);
    assert!(page.contains(".TH fslab 1") && page.contains("fslab\\-map(1)"), "{}", &page[..400.min(page.len())]);
    let dir = common::temp::dir("man");
    fslab_expect(&["man", "--dir", dir.path().to_str().unwrap()], 0);
    let map = std::fs::read_to_string(dir.path().join("fslab-map.1")).unwrap();
    assert!(map.contains("\\-\\-units"), "{map}");
    assert!(dir.path().join("fslab.1").is_file() && dir.path().join("fslab-compare.1").is_file());
    let missing = dir.path().join("missing");
    let out = fslab_expect(&["man", "--dir", missing.to_str().unwrap()], 2);
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a directory"));
}

#[test]
fn mistyped_scenarios_and_keys_get_a_suggestion() {
    let lab = Lab::new();
    let scratch = lab.scratch();
    let scratch = scratch.to_str().unwrap();
    for (args, wanted) in [
        (vec!["run", "replace_files", "--scratch", scratch], "did you mean `replace-files`?"),
        (vec!["run", "mmap", "--scratch", scratch], "did you mean `mmap-fill`?"),
        (vec!["run", "replace-files", "--set", "fils=3", "--scratch", scratch], "did you mean `files`?"),
        (vec!["hunt", "mmap-fill", "--vary", "size=64M..128M", "--set", "ordr=seed", "--scratch", scratch], "did you mean `order`?"),
    ] {
        let out = lab.command().args(&args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(wanted), "{args:?}: {stderr}");
    }
    lab.assert_nothing_left("mistyped names");
}

#[test]
fn help_ends_with_examples_that_fit_the_help_width() {
    for command in ["run", "exec", "compare", "report"] {
        let help = stdout(&[command, "--help"]);
        let examples = help.split("Examples:\n").nth(1).unwrap_or_else(|| panic!("{command} --help has no examples:\n{help}"));
        for line in examples.lines().filter(|l| !l.is_empty()) {
            // clap wraps at 100 columns: an example cut in two cannot be copied.
            assert!(line.starts_with("  fslab ") || line.starts_with("  sudo fslab ") || !line.starts_with("  "), "{command}: {line:?}");
        }
    }
}

#[test]
fn help_names_the_environment_and_its_defaults() {
    let help = stdout(&["--help"]);
    for needle in ["FSLAB_STORE", "FSLAB_STATE_DIR", "fslab.db", "/var/tmp/fslab/state"] {
        assert!(help.contains(needle), "{needle} missing from:\n{help}");
    }
}
