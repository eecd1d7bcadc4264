//! Names and stored text reach a terminal, a markdown table or a page
//! escaped: a control character (C0, DEL, C1) in a file name, a stored tag
//! or a stored error prints as `\n`, `\x1b`, `\u{9b}`, never raw, so a name
//! cannot recolour, retitle or clear the terminal or forge a line of
//! output; `--json` keeps the exact text, as JSON strings do.

mod common;

use std::io::Write as _;
use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;
use std::process::Output;

use common::root_or_skip;

/// A file name that recolours the terminal and starts a line of its own.
const NAME: &str = "a\x1b[31mred\nfake line";
/// The same name as fslab prints it.
const SHOWN: &str = "a\\x1b[31mred\\nfake line";

/// A tag that retitles the terminal (OSC ... BEL), uses the one-byte CSI
/// (C1) and a DEL, and one that starts a line of its own.
const TAGS: [&str; 2] = ["evil\x1b]0;owned\x07\u{9b}2J\x7f", "two\nlines"];
/// A stored error that clears the screen and carries markdown's own
/// characters.
const ERROR: &str = "boom\x1b[2J | `rm` <b>x</b>";

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Every control character in `printed` other than the newlines and tabs
/// fslab writes itself: none may come from a name or a store.
fn raw_controls(printed: &str) -> Vec<char> {
    printed.chars().filter(|c| c.is_control() && *c != '\n' && *c != '\t').collect()
}

/// Insist that `out` ended with `code` and that neither stream holds a raw
/// control character or a line made by a name; its stdout and stderr.
fn escaped(out: Output, code: i32, context: &str) -> (String, String) {
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(code), "{context}\n--- stdout\n{stdout}\n--- stderr\n{stderr}");
    for (stream, printed) in [("stdout", &stdout), ("stderr", &stderr)] {
        assert_eq!(raw_controls(printed), Vec::<char>::new(), "{context}: raw control characters on {stream}:\n{printed:?}");
        for forged in ["fake line", "lines"] {
            assert!(!printed.lines().any(|l| l.starts_with(forged)), "{context}: a name made a line on {stream}:\n{printed}");
        }
    }
    (stdout, stderr)
}

#[test]
fn file_names_with_control_characters_are_escaped_in_map_and_frag() {
    let dir = common::temp::dir("controls");
    let file = dir.path().join(NAME);
    // Grown in turn with another file, each append synced: several
    // extents, so frag lists it among the worst.
    let mut ours = std::fs::File::create(&file).unwrap();
    let mut other = std::fs::File::create(dir.path().join("other")).unwrap();
    for _ in 0..8 {
        for f in [&mut ours, &mut other] {
            f.write_all(&[0x5a; 4096]).unwrap();
            f.sync_all().unwrap();
        }
    }
    drop((ours, other));
    let shown = format!("{}/{SHOWN}", dir.path().display());
    let fslab = |args: &[&std::ffi::OsStr]| common::fslab_command().args(args).output().unwrap();

    let (stdout, _) = escaped(fslab(&["map".as_ref(), file.as_os_str()]), 0, "map");
    assert!(stdout.starts_with(&format!("{shown}: ")), "{stdout}");
    assert!(stdout.contains(&format!("\n{shown}: ")), "the summary names it: {stdout}");
    let (stdout, _) = escaped(fslab(&["frag".as_ref(), dir.path().as_os_str()]), 0, "frag");
    assert!(stdout.lines().any(|l| l.contains("worst")) && stdout.contains(&shown), "{stdout}");

    // Errors name the file escaped too, on stderr and in map's JSON.
    let missing = dir.path().join(format!("{NAME}.missing"));
    let (_, stderr) = escaped(fslab(&["map".as_ref(), missing.as_os_str()]), 2, "map of a missing file");
    assert!(stderr.contains(&format!("{shown}.missing")), "{stderr}");
    let (_, stderr) = escaped(fslab(&["frag".as_ref(), missing.as_os_str()]), 2, "frag of a missing path");
    assert!(stderr.contains(&format!("{shown}.missing")), "{stderr}");

    // JSON keeps the exact name.
    let json: serde_json::Value = serde_json::from_slice(&fslab(&["map".as_ref(), file.as_os_str(), "--json".as_ref()]).stdout).unwrap();
    assert_eq!(json["files"][0]["path"], file.to_str().unwrap());
    let json: serde_json::Value = serde_json::from_slice(&fslab(&["frag".as_ref(), dir.path().as_os_str(), "--json".as_ref()]).stdout).unwrap();
    let worst = json["worst"].as_array().unwrap();
    assert!(worst.iter().any(|w| w["path"] == file.to_str().unwrap()), "{worst:?}");
}

/// A run of replace-files on ext4 with `tags`, two repeats, ok or failed
/// with `error`.
fn run_record(id: &str, tags: &[&str], error: Option<&str>) -> fslab::record::RunRecord {
    let mut run = common::crafted_run(id, true, (1..=2).map(|r| common::crafted_case("replace-files", "ext4", r, error)).collect());
    run["run"]["tags"] = serde_json::json!(tags);
    serde_json::from_value(run["run"].clone()).unwrap()
}

#[test]
fn a_store_handed_over_by_another_user_prints_its_text_escaped() {
    if !root_or_skip("store_text_escaped") {
        return;
    }
    // The store is nobody's, in nobody's folder: a file another user
    // handed over, read as root.
    let dir = common::temp::dir("controls-store");
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let theirs = dir.path().join("theirs");
    std::fs::create_dir(&theirs).unwrap();
    let store = theirs.join("handed.db");
    let (base, new) = ("20261121T000001Z-1-00000001", "20261121T000002Z-1-00000002");
    {
        let mut s = fslab::store::Store::open(store.to_str().unwrap()).unwrap();
        s.put_run(&run_record(base, &TAGS, None)).unwrap();
        s.put_run(&run_record(new, &TAGS, Some(ERROR))).unwrap();
    }
    common::run("chown", &["-R", "nobody:nogroup", theirs.to_str().unwrap()]);
    let s = store.to_str().unwrap();
    let fslab = |args: &[&str]| common::fslab_command().args(args).output().unwrap();

    let (stdout, _) = escaped(fslab(&["runs", "--store", s, "--wide"]), 0, "runs");
    assert!(stdout.contains("evil\\x1b]0;owned\\x07\\u{9b}2J\\x7f"), "{stdout}");
    assert!(stdout.contains("two\\nlines"), "{stdout}");
    for args in [vec!["show", s], vec!["show", base, "--store", s], vec!["show", new, "--store", s, "--wide"]] {
        let (stdout, _) = escaped(fslab(&args), 0, &format!("{args:?}"));
        assert!(stdout.contains("two\\nlines"), "{args:?}: {stdout}");
    }
    let (stdout, _) = escaped(fslab(&["show", new, "--store", s]), 0, "show of the failed run");
    assert!(stdout.contains("boom\\x1b[2J"), "{stdout}");

    // compare: the newly failed case quotes the stored error.
    let (stdout, _) = escaped(fslab(&["compare", base, new, "--store", s]), 1, "compare");
    assert!(stdout.contains("boom\\x1b[2J | `rm` <b>x</b>"), "{stdout}");
    let (markdown, _) = escaped(fslab(&["compare", base, new, "--store", s, "--markdown"]), 1, "compare --markdown");
    assert!(markdown.contains("boom\\\\x1b[2J \\| \\`rm\\` &lt;b>x&lt;/b>"), "{markdown}");
    let json: serde_json::Value =
        serde_json::from_slice(&fslab(&["compare", base, new, "--store", s, "--json"]).stdout).unwrap();
    assert_eq!(json["compare"]["newly_failed"][0]["error"], ERROR, "JSON keeps the exact text");

    // The report page: no raw control character in its HTML either.
    let page = dir.path().join("page.html");
    let out = fslab(&["report", new, "--compare", base, "--store", s, "-o", page.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let html = std::fs::read_to_string(&page).unwrap();
    assert_eq!(raw_controls(&html), Vec::<char>::new(), "raw control characters in the page");
    assert!(html.contains("boom\\x1b[2J"), "the page shows the error escaped");
    assert!(Path::new(s).is_file());
}
