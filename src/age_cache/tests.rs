//! Unit tests of the aged-image cache on plain sparse files (no file
//! system made): entries, what lookup refuses, a kill between the two
//! links, and what clear leaves.

use super::*;
use crate::ledger::cleanup_dead;
use std::os::unix::fs::FileExt;

fn tmp() -> tempfile::TempDir {
    crate::test_temp::dir("")
}

/// An 8 MiB sparse "image" with a little data.
fn image(dir: &Path) -> File {
    let path = dir.join("source.img");
    let f = std::fs::OpenOptions::new().read(true).write(true).create_new(true).open(&path).unwrap();
    f.write_all_at(b"aged", 0).unwrap();
    f.write_all_at(&[9u8; 70_000], 3 << 20).unwrap();
    f.set_len(8 << 20).unwrap();
    f
}

fn meta(tag: &str) -> EntryMeta {
    let made_of = BTreeMap::from([("fs".to_string(), "ext4".to_string()), ("age".to_string(), tag.to_string())]);
    EntryMeta::new(made_of, 1.5)
}

/// A ledger in `dir/state`, with its own scratch folder.
fn ledger(dir: &Path) -> Ledger {
    let ledger = Ledger::create(&dir.join("state"), "cache-test").unwrap();
    ledger.set_scratch(OwnedDir::open_or_make(&dir.join("scratch"), FolderRole::Scratch).unwrap()).unwrap();
    ledger
}

#[test]
fn keys_are_the_hash_of_the_sorted_map_and_only_keys_name_files() {
    let a = meta("churn");
    assert!(is_key(&a.key));
    let same: BTreeMap<String, String> = a.made_of.iter().rev().map(|(k, v)| (k.clone(), v.clone())).collect();
    assert_eq!(key_of(&same), a.key);
    assert_ne!(meta("tree").key, a.key);
    for bad in ["", "../etc", &a.key.to_uppercase(), &format!("{}0", a.key)] {
        assert!(!is_key(bad), "{bad}");
    }
    assert_eq!(parse_name(&format!("{}.img", a.key)), Some((a.key.as_str(), true)));
    assert_eq!(parse_name(&format!("{}.img.tmp", a.key)), None);
}

#[test]
fn an_entry_stored_is_found_whole_and_its_write_leaves_the_ledger() {
    let dir = tmp();
    let source = image(dir.path());
    let ledger = ledger(dir.path());
    let cache = ImageCache::open(&dir.path().join("cache")).unwrap();
    let want = meta("churn");
    assert!(cache.lookup(&want.key).unwrap().is_none());
    let stored = cache.store(&ledger, source.try_clone().unwrap(), want.clone()).unwrap();
    assert_eq!(stored.meta.image_bytes, 8 << 20);
    assert_eq!(stored.meta.image_hash, image_copy::content_hash(&source).unwrap().0);
    assert!(stored.meta.data_bytes >= 70_004 && stored.meta.data_bytes < 8 << 20, "{:?}", stored.meta);
    assert!(!stored.meta.created_at.is_empty());
    let found = cache.lookup(&want.key).unwrap().expect("a complete entry");
    assert_eq!(found.meta, stored.meta);
    assert_eq!(found.path(), cache.path().join(format!("{}.img", want.key)));
    let mut copy = Vec::new();
    found.file().read_to_end(&mut copy).unwrap();
    assert_eq!(copy, std::fs::read(dir.path().join("source.img")).unwrap());
    // Released at once, and left: the run's end removes nothing.
    drop(ledger);
    assert!(cache.lookup(&want.key).unwrap().is_some());
    // The same key stored again: the complete entry already there serves.
    let ledger = self::ledger(&dir.path().join("again"));
    let again = cache.store(&ledger, source.try_clone().unwrap(), want.clone()).unwrap();
    assert_eq!(again.meta.created_at, stored.meta.created_at);
}

#[test]
fn lookup_ignores_incomplete_garbled_mismatched_and_symlinked_entries() {
    let dir = tmp();
    let cache = ImageCache::open(&dir.path().join("cache")).unwrap();
    let at = |name: String| cache.path().join(name);
    // Image without json: incomplete.
    let a = meta("a");
    std::fs::write(at(format!("{}.img", a.key)), b"x").unwrap();
    assert!(cache.lookup(&a.key).unwrap().is_none());
    // Garbled json.
    std::fs::write(at(format!("{}.json", a.key)), b"{not json").unwrap();
    assert!(cache.lookup(&a.key).unwrap().is_none());
    // Another key's meta, or the wrong size.
    let b = meta("b");
    std::fs::write(at(format!("{}.json", a.key)), serde_json::to_vec(&b).unwrap()).unwrap();
    assert!(cache.lookup(&a.key).unwrap().is_none());
    let mut sized = a.clone();
    sized.image_bytes = 2;
    std::fs::write(at(format!("{}.json", a.key)), serde_json::to_vec(&sized).unwrap()).unwrap();
    assert!(cache.lookup(&a.key).unwrap().is_none());
    sized.image_bytes = 1;
    std::fs::write(at(format!("{}.json", a.key)), serde_json::to_vec(&sized).unwrap()).unwrap();
    assert!(cache.lookup(&a.key).unwrap().is_some());
    // A symlink at KEY.img (to a file that would pass) is not followed.
    let decoy = dir.path().join("decoy");
    std::fs::write(&decoy, b"y").unwrap();
    std::fs::remove_file(at(format!("{}.img", a.key))).unwrap();
    std::os::unix::fs::symlink(&decoy, at(format!("{}.img", a.key))).unwrap();
    assert!(cache.lookup(&a.key).unwrap().is_none());
    // A FIFO as json is not waited on.
    let c = meta("c");
    rustix::fs::mknodat(rustix::fs::CWD, at(format!("{}.json", c.key)), FileType::Fifo, Mode::RUSR | Mode::WUSR, 0).unwrap();
    assert!(cache.lookup(&c.key).unwrap().is_none());
    assert!(cache.lookup("../../etc/passwd").is_err());
}

#[test]
fn a_symlink_at_the_image_name_is_never_written_through() {
    let dir = tmp();
    let source = image(dir.path());
    let ledger = ledger(dir.path());
    let cache = ImageCache::open(&dir.path().join("cache")).unwrap();
    let want = meta("link");
    let decoy = dir.path().join("decoy");
    std::fs::write(&decoy, b"keep").unwrap();
    std::os::unix::fs::symlink(&decoy, cache.path().join(format!("{}.img", want.key))).unwrap();
    let entry = cache.store(&ledger, source.try_clone().unwrap(), want.clone()).unwrap();
    // Served from our own unnamed copy; the symlink and its target untouched.
    assert_eq!(entry.meta.image_bytes, 8 << 20);
    assert_eq!(std::fs::read(&decoy).unwrap(), b"keep");
    assert!(cache.path().join(format!("{}.img", want.key)).symlink_metadata().unwrap().file_type().is_symlink());
    assert!(!cache.path().join(format!("{}.json", want.key)).exists());
    drop(ledger);
    assert_eq!(std::fs::read(&decoy).unwrap(), b"keep");
}

#[test]
fn a_kill_between_image_and_json_leaves_an_entry_cleanup_removes_and_a_complete_one_survives() {
    let dir = tmp();
    let source = image(dir.path());
    let cache = ImageCache::open(&dir.path().join("cache")).unwrap();
    let ledger = ledger(dir.path());
    let complete = cache.store(&ledger, source.try_clone().unwrap(), meta("complete")).unwrap();
    // Half a store: the image linked, then "SIGKILL" before the json.
    let half = meta("half");
    let path = cache.path().join(format!("{}.img", half.key));
    let token = ledger.record(Resource::CacheImage(path.clone())).unwrap();
    let (file, _) = cache.write_image(&ledger, token, source.try_clone().unwrap(), half.clone(), &path).unwrap();
    link_unnamed(&file, &cache.dir, &format!("{}.img", half.key)).unwrap();
    drop(file);
    // And an entry naming a complete entry's image, proved: left.
    let other = ledger.record(Resource::CacheImage(complete.path().to_path_buf())).unwrap();
    ledger.prove(other, Proof::File(FileId::of(complete.file()).unwrap())).unwrap();
    assert!(path.exists());
    ledger.abandon();
    let cleaned = cleanup_dead(&dir.path().join("state")).unwrap();
    assert_eq!(cleaned.len(), 1, "{cleaned:?}");
    assert!(cleaned[0].failed.is_empty(), "{cleaned:?}");
    assert!(!path.exists(), "the incomplete entry's image is left: {cleaned:?}");
    assert!(cache.lookup(&complete.meta.key).unwrap().is_some());
}

#[test]
fn clear_removes_entries_only() {
    let dir = tmp();
    let source = image(dir.path());
    let ledger = ledger(dir.path());
    let cache = ImageCache::open(&dir.path().join("cache")).unwrap();
    cache.store(&ledger, source.try_clone().unwrap(), meta("one")).unwrap();
    cache.store(&ledger, source.try_clone().unwrap(), meta("two")).unwrap();
    let half = meta("half");
    std::fs::write(cache.path().join(format!("{}.img", half.key)), b"x").unwrap();
    let orphan = meta("orphan");
    std::fs::write(cache.path().join(format!("{}.json", orphan.key)), b"{}").unwrap();
    // Not entries: other names, a folder and a symlink by an entry's name.
    let keep = ["notes.txt", "abc.img", &format!("{}.img.part", half.key)];
    for name in keep {
        std::fs::write(cache.path().join(name), b"keep").unwrap();
    }
    let decoy = dir.path().join("decoy");
    std::fs::write(&decoy, b"keep").unwrap();
    let link = cache.path().join(format!("{}.img", meta("link").key));
    std::os::unix::fs::symlink(&decoy, &link).unwrap();
    std::fs::create_dir(cache.path().join(format!("{}.json", meta("dir").key))).unwrap();
    let cleared = cache.clear().unwrap();
    assert_eq!((cleared.entries, cleared.in_use), (4, 0));
    assert!(cleared.bytes >= 2 * 70_000, "{cleared:?}");
    let mut left: Vec<String> =
        std::fs::read_dir(cache.path()).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    left.sort();
    assert_eq!(left.len(), keep.len() + 2, "{left:?}");
    assert_eq!(std::fs::read(&decoy).unwrap(), b"keep");
    assert!(link.symlink_metadata().is_ok());
    assert_eq!(cache.clear().unwrap(), Cleared::default());
}

#[test]
fn an_entry_in_use_is_made_once_and_kept_by_clear_until_let_go() {
    let dir = tmp();
    let source = image(dir.path());
    let ledger = ledger(dir.path());
    let cache = ImageCache::open(&dir.path().join("cache")).unwrap();
    let want = meta("used");
    let key = want.key.clone();
    // Made once: a second taker of the key finds what the first made.
    let (first, how) = cache.entry_for(&key, "test", || cache.store(&ledger, source.try_clone().unwrap(), want.clone())).unwrap();
    assert_eq!(how, Provenance::Made);
    let (second, how) = cache.entry_for(&key, "test", || panic!("made twice")).unwrap();
    assert_eq!(how, Provenance::Found);
    let cleared = cache.clear().unwrap();
    assert_eq!((cleared.entries, cleared.in_use), (0, 1), "an entry in use was removed");
    assert!(cache.lookup(&key).unwrap().is_some());
    drop((first, second));
    let cleared = cache.clear().unwrap();
    assert_eq!((cleared.entries, cleared.in_use), (1, 0));
    let left: Vec<_> = std::fs::read_dir(cache.path()).unwrap().collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn an_image_left_without_its_json_is_replaced_under_the_keys_lock() {
    let dir = tmp();
    let source = image(dir.path());
    let ledger = ledger(dir.path());
    let cache = ImageCache::open(&dir.path().join("cache")).unwrap();
    let want = meta("killed");
    std::fs::write(cache.path().join(format!("{}.img", want.key)), b"half").unwrap();
    let (entry, how) = cache.entry_for(&want.key, "test", || cache.store(&ledger, source.try_clone().unwrap(), want.clone())).unwrap();
    assert_eq!(how, Provenance::Made);
    assert!(!entry.is_unnamed(), "the run's image was not given the entry's name");
    assert_eq!(cache.lookup(&want.key).unwrap().unwrap().meta.image_hash, entry.meta.image_hash);
}

#[test]
fn a_cache_folder_others_may_write_or_own_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tmp();
    let open = dir.path().join("open");
    std::fs::create_dir(&open).unwrap();
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
    let e = ImageCache::open(&open).unwrap_err();
    assert_eq!(e.kind, crate::error::ErrorKind::Environment, "{e}");
    assert!(e.message.contains("age cache folder") && e.message.contains("--age-cache"), "{e}");
    if rustix::process::geteuid().is_root() {
        let theirs = dir.path().join("theirs");
        std::fs::create_dir(&theirs).unwrap();
        std::os::unix::fs::chown(&theirs, Some(65534), Some(65534)).unwrap();
        let e = ImageCache::open(&theirs).unwrap_err();
        assert!(e.message.contains("belongs to uid 65534"), "{e}");
        assert!(ImageCache::open_existing(&theirs).is_err());
    }
    assert!(ImageCache::open_existing(&dir.path().join("absent")).unwrap().is_none());
}
