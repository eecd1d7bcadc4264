//! The aged-image cache on real file systems: an image exported from a
//! scratch target, stored, looked up, and cases started from copies of it
//! (sparse on this ext4 scratch folder, reflinked on an xfs one), copies
//! mounted side by side, and `fslab cleanup --cache`.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use common::{have, root_or_skip, run, LoopDevice};
use fslab::ledger::folder::{FolderRole, OwnedDir};
use fslab::age_cache::{key_of, CacheEntry, EntryMeta, ImageCache};
use fslab::ledger::Ledger;
use fslab::site::{FsType, Made, Scratch, TargetKind, TargetOptions};

/// A test folder with a state folder and a scratch folder (`scratch`, or
/// `scratch_at` when given), and a ledger holding the scratch folder.
fn setup(scratch_at: Option<&Path>) -> (tempfile::TempDir, PathBuf, Ledger) {
    let dir = common::temp::dir("");
    let scratch = scratch_at.map_or_else(|| dir.path().join("scratch"), Path::to_path_buf);
    let ledger = Ledger::create(&dir.path().join("state"), "cache-it").unwrap();
    ledger.set_scratch(OwnedDir::open_or_make(&scratch, FolderRole::Scratch).unwrap()).unwrap();
    (dir, scratch, ledger)
}

fn options(scratch: &Path, size: u64) -> TargetOptions {
    TargetOptions { scratch: scratch.to_path_buf(), size_bytes: Some(size), ..TargetOptions::default() }
}

/// The bytes of the "aged" file the base target holds.
fn pattern() -> Vec<u8> {
    (0..3 << 20).map(|i: u32| (i * 7 % 251) as u8).collect()
}

/// Make a `fs` target, write the aged file, export, store it as an entry
/// keyed by `fs` and `tag`; the entry looked up again, and the target's
/// record. The exported image is compared byte for byte with the stored.
fn stored_entry(fs: FsType, size: u64, tag: &str, ledger: &Ledger, scratch: &Path, cache: &ImageCache) -> (CacheEntry, fslab::record::TargetRecord) {
    let mut base = Scratch::new(fs).make(ledger, &options(scratch, size), &format!("base-{tag}")).unwrap();
    std::fs::write(base.work_dir().join("aged.bin"), pattern()).unwrap();
    let record = base.record();
    let exported = base.export_image().unwrap().expect("a scratch target has an image");
    let image = base.backing_path().unwrap().to_path_buf();
    let made_of = BTreeMap::from([
        ("fs".to_string(), fs.name().to_string()),
        ("mkfs_args".to_string(), record.mkfs_args.join(" ")),
        ("tag".to_string(), tag.to_string()),
    ]);
    let meta = EntryMeta::new(made_of, 0.5);
    let stored = cache.store(ledger, exported, meta.clone()).unwrap();
    run("cmp", &[stored.path().to_str().unwrap(), image.to_str().unwrap()]);
    base.release().unwrap();
    let found = cache.lookup(&meta.key).unwrap().expect("the entry just stored");
    assert_eq!(found.meta, stored.meta);
    assert_eq!(found.meta.image_bytes, size);
    (found, record)
}

/// A case made from `entry`: its record, after checking the aged file is there.
fn case_from<'l>(fs: FsType, entry: &Arc<CacheEntry>, ledger: &'l Ledger, scratch: &Path, run_id: &str) -> Box<dyn Made + 'l> {
    let options = TargetOptions { base_image: Some(entry.clone()), ..options(scratch, 64 << 20) };
    let case = Scratch::new(fs).make(ledger, &options, run_id).unwrap();
    assert_eq!(std::fs::read(case.work_dir().join("aged.bin")).unwrap(), pattern());
    case
}

#[test]
fn an_ext4_image_is_stored_and_cases_start_from_sparse_copies() {
    if !root_or_skip("image_cache_ext4") {
        return;
    }
    let (dir, scratch, ledger) = setup(None);
    let cache = ImageCache::open(&dir.path().join("cache")).unwrap();
    let (entry, base_record) = stored_entry(FsType::Ext4, 256 << 20, "ext4", &ledger, &scratch, &cache);
    let entry = Arc::new(entry);
    let case = case_from(FsType::Ext4, &entry, &ledger, &scratch, "case-1");
    let record = case.record();
    let copy = record.image_copy.clone().unwrap_or_default();
    assert!(copy.starts_with(&format!("sparse copy of cache entry {} (", &entry.meta.key[..12])) && copy.ends_with(" MiB of data)"), "{copy}");
    assert_eq!(record.mkfs_args, base_record.mkfs_args);
    assert_eq!(record.mount_opts, base_record.mount_opts);
    // The copy's image is the entry's until mounted; the mount wrote to it
    // since, so only its length is compared here (byte identity is the
    // stored-vs-exported cmp above and the copy unit tests).
    assert_eq!(std::fs::metadata(case.backing_path().unwrap()).unwrap().len(), entry.meta.image_bytes);
    let json = serde_json::to_value(&record).unwrap();
    assert_eq!(json["image_copy"], serde_json::Value::String(copy));
    case.release().unwrap();
    // A fresh target's record says nothing of copies.
    let fresh = serde_json::to_value(&base_record).unwrap();
    assert!(fresh.get("image_copy").is_none(), "{fresh}");
}

#[test]
fn copies_of_one_xfs_or_btrfs_entry_mount_side_by_side() {
    if !root_or_skip("image_cache_side_by_side") {
        return;
    }
    for (fs, size) in [(FsType::Xfs, 320u64 << 20), (FsType::Btrfs, 256 << 20)] {
        if !have(&format!("mkfs.{}", fs.name())) {
            eprintln!("skipping {fs}: mkfs.{fs} is not installed");
            continue;
        }
        let (dir, scratch, ledger) = setup(None);
        let cache = ImageCache::open(&dir.path().join("cache")).unwrap();
        let (entry, _) = stored_entry(fs, size, fs.name(), &ledger, &scratch, &cache);
        let entry = Arc::new(entry);
        let a = case_from(fs, &entry, &ledger, &scratch, "case-a");
        let b = case_from(fs, &entry, &ledger, &scratch, "case-b");
        if fs == FsType::Xfs {
            // xfs refuses a second mount of one UUID without it.
            assert_eq!(b.record().mount_opts.as_deref(), Some("nouuid"));
        } else {
            // btrfs (6.7 and later) gives a cloned single-device file
            // system a temporary fsid of its own.
            assert_eq!(b.record().mount_opts, None);
        }
        b.release().unwrap();
        a.release().unwrap();
    }
}

/// The image a scratch target exported, stored in a cache on the scratch
/// folder's own mount, is the entry itself: linked under the key's name,
/// not copied (an aged 2 GiB image holds about 1.7 GiB of data, which a
/// copy read, wrote and synced again). The run's release takes only its
/// name in the scratch folder; the entry stays whole, and a case starts
/// from it. A cache folder on another mount of the same file system (a
/// bind mount, where a link cannot reach) gets a copy.
#[test]
fn an_exported_image_becomes_the_entry_itself_where_the_cache_shares_its_mount() {
    use fslab::age_cache::image_copy::content_hash;
    use fslab::ledger::folder::FileId;
    use std::os::unix::fs::MetadataExt;
    if !root_or_skip("image_cache_linked") {
        return;
    }
    let (dir, scratch, ledger) = setup(None);
    let bind = dir.path().join("bind");
    std::fs::create_dir(&bind).unwrap();
    run("mount", &["--bind", bind.to_str().unwrap(), bind.to_str().unwrap()]);
    struct Unmount(PathBuf);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = common::unmount(&self.0);
        }
    }
    let _bound = Unmount(bind.clone());
    for (cache_dir, linked) in [(dir.path().join("cache"), true), (bind.join("cache"), false)] {
        let cache = ImageCache::open(&cache_dir).unwrap();
        let tag = if linked { "linked" } else { "bind" };
        let mut base = Scratch::new(FsType::Ext4).make(&ledger, &options(&scratch, 256 << 20), &format!("base-{tag}")).unwrap();
        std::fs::write(base.work_dir().join("aged.bin"), pattern()).unwrap();
        let exported = base.export_image().unwrap().expect("a scratch target has an image");
        let image = base.backing_path().unwrap().to_path_buf();
        let id = FileId::of(&exported).unwrap();
        let (hash, data) = content_hash(&exported).unwrap();
        let made_of = BTreeMap::from([("fs".to_string(), "ext4".to_string()), ("tag".to_string(), tag.to_string())]);
        let stored = cache.store(&ledger, exported, EntryMeta::new(made_of.clone(), 0.5)).unwrap();
        assert_eq!(
            FileId::of(stored.file()).unwrap() == id,
            linked,
            "{tag}: the entry should {}be the exported image itself",
            if linked { "" } else { "not " }
        );
        assert_eq!(std::fs::metadata(&image).unwrap().nlink(), if linked { 2 } else { 1 });
        assert_eq!(stored.meta.image_hash, hash);
        // Pages read into the page cache over unwritten extents count as
        // data for SEEK_DATA: the hash above made some.
        assert!(stored.meta.data_bytes >= data, "{} < {data}", stored.meta.data_bytes);
        drop(stored);
        base.release().unwrap();
        assert!(!image.exists(), "the release left the scratch image's name");
        let found = cache.lookup(&key_of(&made_of)).unwrap().expect("the entry, whole after the release");
        assert_eq!(found.file().metadata().unwrap().nlink(), 1);
        assert_eq!(content_hash(found.file()).unwrap().0, hash);
        let case = case_from(FsType::Ext4, &Arc::new(found), &ledger, &scratch, &format!("case-{tag}"));
        case.release().unwrap();
        cache.clear().unwrap();
    }
}

/// Run `check` with a scratch folder on a fresh `fs` (mkfs `args`) of
/// 2 GiB on a loop device.
fn on_a_scratch_folder_of(fs: &str, args: &[&str], check: impl FnOnce(&Path, &Ledger, &ImageCache)) {
    let mut lo = LoopDevice::new(2048);
    let mount = lo.format_and_mount(fs, args, None);
    let (_dir, scratch, ledger) = setup(Some(&mount.join("scratch")));
    let cache = ImageCache::open(&fslab::age_cache::default_dir(&scratch)).unwrap();
    check(&scratch, &ledger, &cache);
}

#[test]
fn reflinks_are_used_where_they_keep_the_loop_devices_sectors() {
    if !root_or_skip("image_cache_reflink") {
        return;
    }
    // btrfs: a reflinked file keeps 512-byte direct-I/O alignment.
    if have("mkfs.btrfs") {
        on_a_scratch_folder_of("btrfs", &["-f", "-q"], |scratch, ledger, cache| {
            let (entry, _) = stored_entry(FsType::Ext4, 256 << 20, "btrfs-folder", ledger, scratch, cache);
            let entry = Arc::new(entry);
            let case = case_from(FsType::Ext4, &entry, ledger, scratch, "case-r");
            assert_eq!(case.record().image_copy, Some(format!("reflink of cache entry {}", &entry.meta.key[..12])));
            case.release().unwrap();
        });
    }
    // xfs: the entry is a reflink (byte-identical, checked by cmp), but a
    // case's image is not: xfs raises a shared file's direct-I/O alignment
    // to 4096, and this 1 KiB-block ext4 would not mount on such a loop
    // device, so the copy is sparse.
    if have("mkfs.xfs") {
        on_a_scratch_folder_of("xfs", &["-f", "-q", "-m", "reflink=1"], |scratch, ledger, cache| {
            let (entry, _) = stored_entry(FsType::Ext4, 256 << 20, "xfs-folder", ledger, scratch, cache);
            let entry = Arc::new(entry);
            let case = case_from(FsType::Ext4, &entry, ledger, scratch, "case-x");
            let copy = case.record().image_copy.unwrap_or_default();
            assert!(copy.starts_with("sparse copy of cache entry"), "{copy}");
            case.release().unwrap();
            let probe = scratch.join("probe");
            let dst = std::fs::OpenOptions::new().read(true).write(true).create_new(true).open(&probe).unwrap();
            let how = fslab::age_cache::image_copy::copy_image(entry.file(), &dst, false).unwrap();
            assert_eq!(how, fslab::age_cache::image_copy::Copied::Reflink);
            run("cmp", &[entry.path().to_str().unwrap(), probe.to_str().unwrap()]);
            std::fs::remove_file(&probe).unwrap();
        });
    }
}

#[test]
fn cleanup_cache_empties_the_cache_and_refuses_one_not_ours() {
    if !root_or_skip("cleanup_cache") {
        return;
    }
    let lab = common::Lab::new();
    let cache_dir = lab.dir.path().join("cache");
    let (dir, scratch, ledger) = setup(None);
    let cache = ImageCache::open(&cache_dir).unwrap();
    let source = dir.path().join("source");
    std::fs::write(&source, vec![1u8; 1 << 20]).unwrap();
    let mut made_of = BTreeMap::from([("fs".to_string(), "ext4".to_string())]);
    for tag in ["a", "b"] {
        made_of.insert("tag".into(), tag.into());
        let meta = EntryMeta::new(made_of.clone(), 0.0);
        cache.store(&ledger, std::fs::File::open(&source).unwrap(), meta).unwrap();
    }
    std::fs::write(cache_dir.join("mine.txt"), b"keep").unwrap();
    let _ = scratch;
    let out = lab.command().args(["cleanup", "--cache", "--age-cache"]).arg(&cache_dir).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("removed 2 entries (2.0 MiB)") || text.contains("removed 2 entries"), "{text}");
    assert_eq!(std::fs::read(cache_dir.join("mine.txt")).unwrap(), b"keep");
    assert!(cache.lookup(&key_of(&made_of)).unwrap().is_none());
    // JSON says the same.
    let out = lab.command().args(["cleanup", "--json", "--cache", "--age-cache"]).arg(&cache_dir).output().unwrap();
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["cache"]["entries"], 0);
    // The default cache folder is SCRATCH/age-cache; absent, it is empty.
    let out = lab.command().args(["cleanup", "--cache", "--scratch"]).arg(lab.scratch()).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains("age-cache: removed 0 entries"));
    // A cache folder another user owns is refused (exit 3), untouched.
    std::os::unix::fs::chown(&cache_dir, Some(65534), Some(65534)).unwrap();
    let out = lab.command().args(["cleanup", "--cache", "--age-cache"]).arg(&cache_dir).output().unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("age cache folder"));
    assert!(cache_dir.join("mine.txt").exists());
    // --age-cache without --cache is a usage error.
    let out = lab.command().args(["cleanup", "--age-cache"]).arg(&cache_dir).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    std::os::unix::fs::chown(&cache_dir, Some(0), Some(0)).unwrap();
}

/// The speeds the report quotes: a 1 GiB image holding 800 MiB of data
/// in scattered regions, hashed, copied as a case's image is, and stored
/// (kept where it is, hashed from the disk, synced) — in a folder on this
/// machine's /var/tmp (ext4: sparse copies), and on fresh xfs (reflink=1)
/// and btrfs folders. Run with
/// `--release --ignored --nocapture`.
#[test]
#[ignore]
fn measure_copy_and_hash_speed() {
    let dir = common::temp::dir("");
    measure_in("/var/tmp", dir.path());
    for (fs, args) in [("xfs", &["-f", "-q", "-m", "reflink=1"][..]), ("btrfs", &["-f", "-q"][..])] {
        if have(&format!("mkfs.{fs}")) {
            let mut lo = LoopDevice::new(4096);
            let mount = lo.format_and_mount(fs, args, None);
            measure_in(fs, &mount);
        }
    }
}

fn measure_in(label: &str, folder: &Path) {
    use fslab::age_cache::image_copy::{content_hash, copy_image};
    use std::os::unix::fs::FileExt;
    use std::time::Instant;
    let (_dir, _scratch, ledger) = setup(None);
    let src = std::fs::OpenOptions::new().read(true).write(true).create_new(true).open(folder.join("aged.img")).unwrap();
    // 1 GiB in 4 MiB stripes, 25 of every 32 written (800 MiB of data).
    let stripe: Vec<u8> = (0..4u32 << 20).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8 | 1).collect();
    for n in 0..256u64 {
        if n % 32 < 25 {
            src.write_all_at(&stripe, n * (4 << 20)).unwrap();
        }
    }
    src.set_len(1 << 30).unwrap();
    src.sync_all().unwrap();
    let rate = |bytes: u64, t: Instant| {
        format!("{:.2?}, {:.0} MiB/s", t.elapsed(), bytes as f64 / 1048576.0 / t.elapsed().as_secs_f64())
    };
    let t = Instant::now();
    let (hash, data) = content_hash(&src).unwrap();
    eprintln!("{label}: hash of {} MiB of data (page cache warm): {}", data >> 20, rate(data, t));
    let dst = std::fs::OpenOptions::new().read(true).write(true).create_new(true).open(folder.join("copy.img")).unwrap();
    let t = Instant::now();
    let how = copy_image(&src, &dst, true).unwrap();
    eprintln!("{label}: a case's copy, {how:?}: {}", rate(data, t));
    let t = Instant::now();
    dst.sync_all().unwrap();
    eprintln!("{label}: its sync: {:.2?}", t.elapsed());
    assert_eq!(content_hash(&dst).unwrap().0, hash);
    let cache = ImageCache::open(&folder.join("cache")).unwrap();
    let made_of = BTreeMap::from([("fs".to_string(), label.to_string())]);
    let t = Instant::now();
    let entry = cache.store(&ledger, src.try_clone().unwrap(), EntryMeta::new(made_of, 0.0)).unwrap();
    eprintln!("{label}: store (kept, hashed from the disk, synced): {}", rate(data, t));
    assert_eq!(entry.meta.image_hash, hash);
    drop(entry);
    for name in ["aged.img", "copy.img"] {
        std::fs::remove_file(folder.join(name)).unwrap();
    }
    cache.clear().unwrap();
}

/// The child of the kill test: store `SRC` into the cache `CACHE` as the
/// entry tagged `TAG`, with a ledger in `STATE` (all from the environment).
#[test]
#[ignore]
fn child_store() {
    let Some(cache) = std::env::var_os("FSLAB_TEST_CACHE") else { return };
    let var = |name: &str| std::env::var(name).unwrap();
    let ledger = Ledger::create(Path::new(&var("FSLAB_TEST_STATE")), &format!("child-{}", var("FSLAB_TEST_TAG"))).unwrap();
    let cache = ImageCache::open(Path::new(&cache)).unwrap();
    let source = std::fs::File::open(var("FSLAB_TEST_SRC")).unwrap();
    let made_of = BTreeMap::from([("tag".to_string(), var("FSLAB_TEST_TAG"))]);
    cache.store(&ledger, source, EntryMeta::new(made_of, 0.0)).unwrap();
}

#[test]
fn sigkill_during_a_store_then_cleanup_leaves_only_complete_entries() {
    use std::os::unix::fs::FileExt;
    use std::time::{Duration, Instant};
    if !root_or_skip("cache_sigkill") {
        return;
    }
    let lab = common::Lab::new();
    let cache_dir = lab.dir.path().join("cache");
    let src_path = lab.dir.path().join("source.img");
    let src = std::fs::OpenOptions::new().read(true).write(true).create_new(true).open(&src_path).unwrap();
    let stripe = vec![0x5au8; 4 << 20];
    for n in 0..24u64 {
        src.write_all_at(&stripe, n * (8 << 20)).unwrap();
    }
    src.set_len(256 << 20).unwrap();
    let child = |tag: &str| {
        std::process::Command::new(std::env::current_exe().unwrap())
            .args(["child_store", "--exact", "--ignored", "--quiet"])
            .env("FSLAB_TEST_CACHE", &cache_dir)
            .env("FSLAB_TEST_STATE", lab.state())
            .env("FSLAB_TEST_SRC", &src_path)
            .env("FSLAB_TEST_TAG", tag)
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap()
    };
    // How long a whole store takes here, then kills spread over it.
    let t = Instant::now();
    assert!(child("whole").wait().unwrap().success());
    let whole = t.elapsed();
    let mut tags = vec!["whole".to_string()];
    for step in 0..10u32 {
        let tag = format!("kill-{step}");
        let mut c = child(&tag);
        // The last ones land after the store is done (the child's own start
        // takes some of `whole`).
        std::thread::sleep(whole * step / 6 + Duration::from_millis(u64::from(step) * 3));
        let _ = c.kill();
        c.wait().unwrap();
        tags.push(tag);
        let out = lab.command().arg("cleanup").output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let cache = ImageCache::open(&cache_dir).unwrap();
    let mut complete = 0;
    for tag in &tags {
        let key = key_of(&BTreeMap::from([("tag".to_string(), tag.clone())]));
        let image = cache_dir.join(format!("{key}.img"));
        let json = cache_dir.join(format!("{key}.json"));
        match cache.lookup(&key).unwrap() {
            Some(entry) => {
                complete += 1;
                run("cmp", &[entry.path().to_str().unwrap(), src_path.to_str().unwrap()]);
            }
            None => assert!(!image.exists() && !json.exists(), "{tag}: an incomplete entry is left"),
        }
    }
    assert!(complete >= 1, "the whole store left no entry");
    eprintln!("a store takes {whole:.2?}; {complete} of {} entries complete", tags.len());
    // No ledger is left (the sysctl lock file cleanup takes may be), and
    // nothing but entries in the cache folder.
    let ledgers: Vec<String> = std::fs::read_dir(lab.state())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".ledger") || n.ends_with(".tmp"))
        .collect();
    assert!(ledgers.is_empty(), "{ledgers:?}");
    let names: Vec<String> = std::fs::read_dir(&cache_dir).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    assert_eq!(names.len(), 2 * complete, "{names:?}");
}

/// The run's reflink pool: an entry copied into it once, each case's image
/// a reflink of that copy, on a loop device that keeps 512-byte sectors
/// with direct I/O (a 512-byte-sector xfs mounts on it) and as rotational
/// as one over a file of the scratch folder, the aged file there;
/// everything released with the ledger, the pool last.
#[test]
fn cases_in_the_pool_are_reflinks_on_512_byte_sectors_and_the_ledger_releases_the_pool() {
    if !root_or_skip("image_cache_pool") || !have("mkfs.btrfs") {
        return;
    }
    use fslab::site::pool::Pool;
    let (dir, scratch, ledger) = setup(None);
    let cache = ImageCache::open(&dir.path().join("cache")).unwrap();
    let (entry, _) = stored_entry(FsType::Xfs, 512 << 20, "pooled", &ledger, &scratch, &cache);
    let entry = Arc::new(entry);
    let mut pool = Pool::make(&ledger, "pool-it").unwrap();
    let pooled = pool.copy_of(&ledger, &entry).unwrap();
    assert!(Arc::ptr_eq(&pooled, &pool.copy_of(&ledger, &entry).unwrap()), "an entry is copied into the pool once");
    let sys = |device: &Path, what: &str| {
        let name = device.file_name().unwrap().to_str().unwrap().to_string();
        std::fs::read_to_string(format!("/sys/block/{name}/{what}")).unwrap().trim().to_string()
    };
    // What a loop device over a file of the scratch folder says.
    let probe = scratch.join("rotational-probe");
    std::fs::File::create(&probe).unwrap().set_len(1 << 20).unwrap();
    let probe_loop = PathBuf::from(run("losetup", &["--find", "--show", probe.to_str().unwrap()]).trim());
    let rotational = sys(&probe_loop, "queue/rotational");
    run("losetup", &["--detach", probe_loop.to_str().unwrap()]);
    std::fs::remove_file(&probe).unwrap();
    for n in 0..2 {
        let options = TargetOptions { base_image: Some(entry.clone()), pooled: Some(pooled.clone()), ..options(&scratch, 64 << 20) };
        let case = Scratch::new(FsType::Xfs).make(&ledger, &options, &format!("case-{n}")).unwrap();
        assert_eq!(std::fs::read(case.work_dir().join("aged.bin")).unwrap(), pattern());
        let want = format!("reflink of the run's pooled copy of cache entry {}", &entry.meta.key[..12]);
        assert_eq!(case.record().image_copy, Some(want));
        assert!(case.backing_path().unwrap().starts_with(scratch.join("pool-it-pool/mnt")), "{:?}", case.backing_path());
        let device = case.device().unwrap();
        assert_eq!((sys(device, "queue/logical_block_size").as_str(), sys(device, "loop/dio").as_str()), ("512", "1"));
        assert_eq!(sys(device, "queue/rotational"), rotational, "as rotational as the scratch folder's");
        case.release().unwrap();
    }
    drop((pooled, pool));
    assert!(ledger.release_all().is_empty());
    assert_eq!(common::mounts_under(&scratch), Vec::<PathBuf>::new());
    assert_eq!(common::loops_under(&scratch), Vec::<String>::new());
    assert!(!scratch.join("pool-it-pool").exists(), "the pool's folder is gone");
}
