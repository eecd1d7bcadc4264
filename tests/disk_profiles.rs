//! `fslab list --disks`: the disk model's drives, in 120 columns and as
//! JSON, and the one a profile file adds; a bad profile file is bad input
//! (exit 2) naming the file and the field, and one is read only where root
//! or the invoking user points.

mod common;

use common::root_or_skip;

const EXAMPLE: &str = include_str!("../examples/disk-profile.json");

const BUILT_IN: [&str; 7] = ["hdd-7200", "hdd-7200-desktop", "hdd-7200-2009", "scsi-15k-2004", "laptop-5400", "ssd-plp", "ssd-no-plp"];

fn stdout(args: &[&str]) -> String {
    String::from_utf8(common::fslab_expect(args, 0).stdout).unwrap()
}

fn refused(args: &[&str]) -> String {
    let out = common::fslab_expect(args, 2);
    assert!(out.stdout.is_empty(), "nothing listed: {}", String::from_utf8_lossy(&out.stdout));
    String::from_utf8(out.stderr).unwrap()
}

/// The table's row of `name`, cut into its cells at runs of two spaces.
fn row<'t>(text: &'t str, name: &str) -> Vec<&'t str> {
    let line = text.lines().find(|l| l.starts_with(&format!("{name} "))).unwrap_or_else(|| panic!("no row {name}:\n{text}"));
    line.split("  ").map(str::trim).filter(|c| !c.is_empty()).collect()
}

#[test]
fn the_drives_are_listed_with_their_figures_in_120_columns_and_as_json() {
    let text = stdout(&["list", "--disks"]);
    for line in text.lines() {
        assert!(line.chars().count() <= 120, "{} columns: {line}", line.chars().count());
    }
    assert!(text.starts_with("disk "), "{text}");
    assert_eq!(row(&text, "hdd-7200-2009"), ["hdd-7200-2009", "disk", "7200", "0.8/8.5/14.5 ms", "70/35", "16 MiB, wc on", "destage", "Seagate Barracuda 7200.10 class"]);
    assert_eq!(row(&text, "scsi-15k-2004")[6], "0", "its write cache is off: a flush has nothing to do");
    assert_eq!(row(&text, "ssd-plp")[3..7], ["50/65 µs", "500/460", "PLP", "20 µs"]);
    assert_eq!(row(&text, "ssd-no-plp")[5..7], ["volatile", "2 ms"]);
    for name in BUILT_IN {
        row(&text, name);
        assert!(text.contains(&format!("\n  {name}, ")), "{name} has its source in full:\n{text}");
    }

    let json = common::fslab_json(&["list", "--disks", "--json"]);
    assert_eq!(json["schema"], "fslab/1");
    let disks = json["disks"].as_array().unwrap();
    let names: Vec<&str> = disks.iter().map(|d| d["name"].as_str().unwrap()).collect();
    assert_eq!(names, BUILT_IN);
    let old = &disks[2];
    assert_eq!((old["kind"].as_str(), old["file"].is_null()), (Some("disk"), true));
    assert_eq!(old["disk"]["outer_bytes_per_s"], 70_000_000);
    assert_eq!(disks[5]["ssd"]["flush_s"], 20e-6);
    assert!(disks.iter().all(|d| !d["source"].as_str().unwrap().is_empty()), "every drive says where its figures come from");
}

#[test]
fn a_profile_file_adds_a_drive_shaped_as_the_listing_gives_one() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("disk.json");
    std::fs::write(&file, EXAMPLE).unwrap();
    let f = file.to_str().unwrap();
    let text = stdout(&["list", "--disks", "--disk-profile", f]);
    assert_eq!(row(&text, "barracuda-7200.12")[..5], ["barracuda-7200.12", "disk", "7200", "0.8/8.5/14.5 ms", "125/62.5"]);
    assert!(text.contains(&format!("  barracuda-7200.12 (from {f}), ")), "{text}");
    let json = common::fslab_json(&["list", "--disks", "--json", "--disk-profile", f]);
    let added = json["disks"].as_array().unwrap().last().unwrap().clone();
    assert_eq!((added["name"].as_str(), added["file"].as_str()), (Some("barracuda-7200.12"), Some(f)));

    // A listed drive, renamed and without what the listing adds, is a
    // profile file: the 2009 disk with its write cache off.
    let json = common::fslab_json(&["list", "--disks", "--json"]);
    let mut mine = json["disks"][2].clone();
    let object = mine.as_object_mut().unwrap();
    object.remove("kind");
    object.remove("file");
    mine["name"] = "desktop-2009-wc-off".into();
    mine["disk"]["write_cache"] = false.into();
    std::fs::write(&file, serde_json::to_string(&mine).unwrap()).unwrap();
    let text = stdout(&["list", "--disks", "--disk-profile", f]);
    assert_eq!(row(&text, "desktop-2009-wc-off")[5..7], ["16 MiB, wc off", "0"]);

    // The longest name a profile may have, and text from outside: the
    // table still fits, and control characters are shown, not obeyed.
    mine["name"] = "a".repeat(40).into();
    mine["about"] = "mine\x1b[2J".into();
    mine["source"] = "my bench\n(fake line): all of it".into();
    std::fs::write(&file, serde_json::to_string(&mine).unwrap()).unwrap();
    let text = stdout(&["list", "--disks", "--disk-profile", f]);
    assert!(text.lines().all(|l| l.chars().count() <= 120), "{text}");
    assert!(text.contains("mine\\x1b[2J") && text.contains("my bench\\n(fake line)") && !text.contains('\x1b'), "{text}");
}

#[test]
fn a_bad_profile_file_is_refused_naming_the_file_and_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("mine.json");
    let f = file.to_str().unwrap();
    for (text, says) in [
        (EXAMPLE.replace("\"heads\"", "\"head\""), "unknown field `head`"),
        (EXAMPLE.replace("\"rpm\": 7200", "\"rpm\": 72000"), "disk.rpm = 72000"),
        (EXAMPLE.replace("\"rpm\": 7200", "\"rpm\": \"7200\""), "disk.rpm: invalid type: string \"7200\", expected u32"),
        (EXAMPLE.replace("\"inner_bytes_per_s\": 62500000", "\"inner_bytes_per_s\": 250000000"), "disk.inner_bytes_per_s"),
        (EXAMPLE.replace("\"full_stroke_s\": 0.0145", "\"full_stroke_s\": 0.009"), "needs a full stroke from"),
        (EXAMPLE.replace("barracuda-7200.12", "hdd-7200"), "a built-in profile has that name"),
        (EXAMPLE.replace("barracuda-7200.12", "My Disk"), "name = \"My Disk\""),
        (EXAMPLE.replace("\"disk\"", "\"tape\""), "unknown field `tape`"),
        ("{\"name\": \"x\"".into(), "EOF"),
    ] {
        std::fs::write(&file, &text).unwrap();
        let err = refused(&["list", "--disks", "--disk-profile", f]);
        assert!(err.contains(&format!("disk profile {f}: ")) && err.contains(says), "{says}: {err}");
    }
    let mut empty: serde_json::Value = serde_json::from_str(EXAMPLE).unwrap();
    empty["source"] = "  ".into();
    std::fs::write(&file, empty.to_string()).unwrap();
    let err = refused(&["list", "--disks", "--disk-profile", f]);
    assert!(err.contains("source is empty"), "{err}");

    // No such file, a folder, a device, a FIFO (not waited on), too big.
    let err = refused(&["list", "--disks", "--disk-profile", &format!("{f}.missing")]);
    assert!(err.contains("no such file"), "{err}");
    let err = refused(&["list", "--disks", "--disk-profile", dir.path().to_str().unwrap()]);
    assert!(err.contains("a directory, not a regular file"), "{err}");
    let err = refused(&["list", "--disks", "--disk-profile", "/dev/zero"]);
    assert!(err.contains("not a regular file"), "{err}");
    let fifo = dir.path().join("fifo");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let (code, err) = common::finish(common::fslab_command().args(["list", "--disks", "--disk-profile", fifo.to_str().unwrap()]));
    assert!(code == Some(2) && err.contains("a FIFO, not a regular file"), "{code:?} {err}");
    std::fs::write(&file, " ".repeat(70_000)).unwrap();
    assert!(refused(&["list", "--disks", "--disk-profile", f]).contains("over 65536 bytes"));

    // The file goes with --disks; the aging profiles are another listing.
    let err = refused(&["list", "--disk-profile", f]);
    assert!(err.contains("--disks"), "{err}");
    let err = refused(&["list", "--disks", "--ages"]);
    assert!(err.contains("cannot be used with"), "{err}");
}

#[test]
fn a_profile_file_is_read_only_where_root_or_the_user_points() {
    if !root_or_skip("disk_profile_owners") {
        return;
    }
    let dir = common::temp::dir("disk-profile");
    let file = dir.path().join("disk.json");
    std::fs::write(&file, EXAMPLE).unwrap();
    let shared = common::Sticky::new(dir.path());
    let link = |name: &str, uid: u32| shared.link(name, &file, uid);
    let list_with = |file: &str| common::finish(common::fslab_command().args(["list", "--disks", "--disk-profile", file]));
    // A run reads its --disk-profile by the same rule, before it makes
    // anything.
    let run_with = |file: &str| {
        let mut c = common::fslab_command();
        c.args(["exec", "--no-store", "--dir", "/var/tmp", "--disk-profile", file, "--", "true"]);
        common::finish(&mut c)
    };
    // nobody's link in a sticky folder chooses nothing root reads.
    let (code, err) = list_with(&link("theirs", 65534));
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("belongs to uid 65534"), "{err}");
    let (code, err) = run_with(&link("theirs-too", 65534));
    assert!(code == Some(2) && err.contains("belongs to uid 65534"), "{code:?} {err}");
    assert_eq!(list_with(&link("ours", 0)).0, Some(0), "root's own link is followed");
    // A profile decides modelled figures: nobody's own file is refused.
    std::os::unix::fs::chown(&file, Some(65534), Some(65534)).unwrap();
    let (code, err) = list_with(&file.to_string_lossy());
    assert!(code == Some(2) && err.contains("owned by uid 65534, neither root nor you"), "{code:?} {err}");
    let (code, err) = run_with(&file.to_string_lossy());
    assert!(code == Some(2) && err.contains("owned by uid 65534, neither root nor you"), "{code:?} {err}");
    // Unless nobody is who ran sudo.
    let (code, err) = common::finish(common::fslab_command().env("SUDO_UID", "65534").args(["list", "--disks", "--disk-profile", &file.to_string_lossy()]));
    assert_eq!(code, Some(0), "{err}");
}
