//! The cache of aged images: aging runs once per key (file system, mkfs
//! arguments, image size, age profile, fill, aging code's version), and
//! every case after starts from a copy of the finished image.
//!
//! The design decision: an entry is two files in a folder that is
//! fslab's own (checked as the scratch folder is), `KEY.img` and
//! `KEY.json`, each given its name only once whole (`linkat`, which never
//! replaces): the json is linked last, so "the json is there" is "the entry
//! is complete". The json is written unnamed (`O_TMPFILE`); the image is the
//! aged scratch image itself where the folder shares its mount (no copy of
//! its gigabytes), else a copy written unnamed. The write is in the
//! run's ledger before anything is made ([`Resource::CacheImage`]), so a
//! kill between the two links leaves an image the next cleanup removes —
//! by its device and inode, only while no json stands beside it. Nothing
//! in the folder is followed through a symlink or read unless it is a
//! regular file of ours.
//!
//! Runs share the cache through each key's lock (`KEY.lock`,
//! [`KeyLock`]): a key is looked up and made under it exclusively, so it is
//! aged once while other runs wait, and used under it shared, so `cleanup
//! --cache` never removes an entry a live run starts its cases from.

pub mod image_copy;
pub mod key_lock;
mod read_ahead;

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;
use serde::{Deserialize, Serialize};

use key_lock::KeyLock;
use crate::ledger::folder::{FileId, FolderRole, OwnedDir};
use crate::ledger::cache_write::{is_key, parse_name};
use crate::ledger::{Ledger, Resource};
use crate::ledger::proof::Proof;
use crate::error::{Error, Result};

/// The cache folder: checked as fslab's own (owned by the effective
/// user, written by no one else, parents safe — the scratch folder's
/// rules), made 0700 if absent, and held open: every entry is reached
/// from its descriptor.
#[derive(Debug)]
pub struct ImageCache {
    dir: OwnedDir,
}

/// The default cache folder, `SCRATCH/age-cache`: on the scratch folder's
/// file system, so a copy can be a reflink where that file system allows.
pub fn default_dir(scratch: &Path) -> PathBuf {
    scratch.join("age-cache")
}

/// What a cache entry says of itself, kept as `KEY.json` beside `KEY.img`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EntryMeta {
    /// The entry's key: [`key_of`] its `made_of`, as the caller gives it.
    pub key: String,
    /// What the key was made of (fs, mkfs args, image size, age profile
    /// identity, fill, aging version...), as the caller passes it.
    pub made_of: BTreeMap<String, String>,
    /// How long aging took when the entry was made.
    pub aging_seconds: f64,
    /// The image's content hash ([`image_copy::content_hash`]).
    pub image_hash: String,
    /// The image's length.
    pub image_bytes: u64,
    /// Bytes of data in the image (its holes excluded).
    pub data_bytes: u64,
    /// When the entry was made, RFC 3339 UTC (filled by `store` when empty).
    pub created_at: String,
    /// Anything else worth keeping with it (what aging reported).
    #[serde(default)]
    pub notes: Vec<String>,
}

impl EntryMeta {
    /// The meta of a new entry made of `made_of` (its key is
    /// [`key_of`] it) after `aging_seconds` of aging: what `store` fills
    /// in (hash, lengths, creation time) is left empty.
    pub fn new(made_of: BTreeMap<String, String>, aging_seconds: f64) -> EntryMeta {
        EntryMeta {
            key: key_of(&made_of),
            made_of,
            aging_seconds,
            image_hash: String::new(),
            image_bytes: 0,
            data_bytes: 0,
            created_at: String::new(),
            notes: Vec::new(),
        }
    }
}

/// A complete entry, open: a case's image is copied from its descriptor,
/// so the entry can be removed meanwhile without harm.
#[derive(Debug)]
pub struct CacheEntry {
    /// What the entry says of itself.
    pub meta: EntryMeta,
    file: File,
    path: PathBuf,
    /// Not in the cache: this run's own image, without a name there because
    /// the entry's name was taken ([`ImageCache::store`]).
    unnamed: bool,
    /// The key's lock, held shared while the entry is used.
    _lock: Option<KeyLock>,
}

/// How a run came by its entry.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Provenance {
    /// It was in the cache.
    Found,
    /// Another run was making it; this one waited this long for it.
    MadeByAnother {
        /// Seconds waited.
        waited_s: f64,
    },
    /// This run made it.
    Made,
}

impl CacheEntry {
    /// Where the image is in the cache (`DIR/KEY.img`). An entry `store`
    /// kept unnamed (another run's incomplete entry held the name) has no
    /// file there: this is the name it would have had.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The image, open read-only.
    pub fn file(&self) -> &File {
        &self.file
    }

    /// Whether the image is this run's own, not in the cache (its name was
    /// taken by another file).
    pub fn is_unnamed(&self) -> bool {
        self.unnamed
    }
}

/// The key of `made_of`: SHA-256 (lowercase hex) of it serialised
/// canonically (a `BTreeMap` as JSON: names sorted, no spaces).
pub fn key_of(made_of: &BTreeMap<String, String>) -> String {
    use sha2::Digest;
    let json = serde_json::to_vec(made_of).expect("a map of strings serialises");
    image_copy::hex(&sha2::Sha256::digest(json))
}

/// The most a `KEY.json` may hold; more is not one fslab wrote.
const META_MAX: u64 = 1 << 20;

impl ImageCache {
    /// Open (making it 0700 when absent) the cache folder `dir`; one that
    /// is not ours alone is refused (exit 3).
    pub fn open(dir: &Path) -> Result<ImageCache> {
        Ok(ImageCache { dir: OwnedDir::open_or_make(dir, FolderRole::Cache)? })
    }

    /// Open the existing cache folder `dir` (for `cleanup --cache`);
    /// `None` when there is none.
    pub fn open_existing(dir: &Path) -> Result<Option<ImageCache>> {
        Ok(OwnedDir::open_existing(dir, FolderRole::Cache)?.map(|dir| ImageCache { dir }))
    }

    /// The folder's canonical path.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// The complete entry for `key` (image and meta present, regular files
    /// of ours, meta parses, key matches, image as long as stated), else
    /// `None`. The content is not hashed again.
    pub fn lookup(&self, key: &str) -> Result<Option<CacheEntry>> {
        if !is_key(key) {
            return Err(Error::failed(format!("`{key}` is not a cache key (64 hex digits)")));
        }
        let Some(meta_file) = self.open_ours(&format!("{key}.json"))? else { return Ok(None) };
        let mut text = Vec::new();
        let json = self.path().join(format!("{key}.json"));
        meta_file.take(META_MAX).read_to_end(&mut text).map_err(|e| Error::io(&json, "read the cache entry", e))?;
        let Ok(meta) = serde_json::from_slice::<EntryMeta>(&text) else { return Ok(None) };
        if meta.key != key {
            return Ok(None);
        }
        let name = format!("{key}.img");
        let Some(file) = self.open_ours(&name)? else { return Ok(None) };
        let len = file.metadata().map_err(|e| Error::io(&self.path().join(&name), "stat the cache image", e))?.len();
        if len != meta.image_bytes {
            return Ok(None);
        }
        Ok(Some(CacheEntry { meta, file, path: self.path().join(name), unnamed: false, _lock: None }))
    }

    /// The entry for `key`, found, or made by `make` (which stores it) when
    /// the cache has none; held under the key's lock shared for as long as
    /// it lives. The key is looked up and made under its lock exclusively,
    /// so it is made once while other runs wait (`what` says for what, in
    /// their waiting line); an image left without its json by a killed run
    /// is removed first.
    pub fn entry_for(&self, key: &str, what: &str, make: impl FnOnce() -> Result<CacheEntry>) -> Result<(CacheEntry, Provenance)> {
        let started = std::time::Instant::now();
        let waited = |waited: bool, entry: CacheEntry| {
            let how = if waited { Provenance::MadeByAnother { waited_s: started.elapsed().as_secs_f64() } } else { Provenance::Found };
            (entry, how)
        };
        let (lock, blocked) = KeyLock::take(&self.dir, key, false, what)?;
        if let Some(mut entry) = self.lookup(key)? {
            entry._lock = Some(lock);
            return Ok(waited(blocked, entry));
        }
        drop(lock);
        let (lock, blocked) = KeyLock::take(&self.dir, key, true, what)?;
        if let Some(mut entry) = self.lookup(key)? {
            lock.share()?;
            entry._lock = Some(lock);
            return Ok(waited(blocked, entry));
        }
        self.remove_incomplete(key)?;
        let mut entry = match make() {
            Ok(entry) => entry,
            Err(e) => {
                // Nothing to keep under the key: its lock file goes too.
                let _ = lock.remove(&self.dir);
                return Err(e);
            }
        };
        lock.share()?;
        entry._lock = Some(lock);
        Ok((entry, Provenance::Made))
    }

    /// Remove `KEY.img` standing without its json (a run killed between
    /// the two links); call only under the key's exclusive lock, where no
    /// run can be writing it.
    fn remove_incomplete(&self, key: &str) -> Result<()> {
        let (image, json) = (format!("{key}.img"), format!("{key}.json"));
        let stat = |name: &str| self.dir.stat_child(Path::new(name)).map_err(|e| Error::io(&self.path().join(name), "stat", e));
        if stat(&json)?.is_none() && self.open_ours(&image)?.is_some() {
            match rustix::fs::unlinkat(self.dir.fd(), image.as_str(), AtFlags::empty()) {
                Ok(()) | Err(Errno::NOENT) => {}
                Err(e) => return Err(Error::io(&self.path().join(&image), "remove the incomplete cache image", e.into())),
            }
        }
        Ok(())
    }

    /// `name` in the folder, open read-only when it is a regular file of
    /// ours; `None` when absent or anything else (a symlink is not
    /// followed, a FIFO not waited on).
    fn open_ours(&self, name: &str) -> Result<Option<File>> {
        let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
        let fd = match rustix::fs::openat(self.dir.fd(), name, flags, Mode::empty()) {
            Ok(fd) => fd,
            Err(Errno::NOENT | Errno::LOOP | Errno::NXIO | Errno::ISDIR) => return Ok(None),
            Err(e) => return Err(Error::io(&self.path().join(name), "open the cache file", e.into())),
        };
        let stat = rustix::fs::fstat(&fd).map_err(|e| Error::io(&self.path().join(name), "stat", e.into()))?;
        let me = rustix::process::geteuid().as_raw();
        if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile || stat.st_uid != me {
            return Ok(None);
        }
        Ok(Some(File::from(fd)))
    }

    /// Keep `image` (from `export_image`: a finished image nothing writes
    /// any more, which the caller gives up) as entry `meta.key`, hash it
    /// (filling `image_hash`, `image_bytes`, `data_bytes`, and
    /// `created_at` when empty), and make it visible atomically: synced,
    /// linked as `KEY.img`, then `KEY.json`, written unnamed (`O_TMPFILE`)
    /// the same way (json last = complete). Where the folder is on the
    /// image's mount the entry is the image itself, linked under the key's
    /// name (the run's release then takes only its name in the scratch
    /// folder); elsewhere it is a copy, written unnamed. The write is in
    /// `ledger` before anything is made, and released when `store` returns
    /// (an incomplete entry removed, a complete one left). If another run
    /// linked the key first, its entry is used when complete, else our
    /// image, unnamed in the cache (still an entry).
    pub fn store(&self, ledger: &Ledger, image: File, meta: EntryMeta) -> Result<CacheEntry> {
        if !is_key(&meta.key) {
            return Err(Error::failed(format!("`{}` is not a cache key (64 hex digits)", meta.key)));
        }
        let path = self.path().join(format!("{}.img", meta.key));
        let token = ledger.record(Resource::CacheImage(path.clone()))?;
        let stored = self.write_image(ledger, token, image, meta, &path).and_then(|(file, meta)| {
            self.publish(file, meta, &path)
        });
        let released = ledger.release(token);
        let entry = stored?;
        released?;
        Ok(entry)
    }

    /// The entry's image, proved in the ledger, hashed and synced, not yet
    /// named: `image` itself where a link from the folder reaches it (its
    /// mount), else a copy in an unnamed file of the folder; its metadata
    /// filled in.
    fn write_image(
        &self,
        ledger: &Ledger,
        token: crate::ledger::Token,
        image: File,
        mut meta: EntryMeta,
        path: &Path,
    ) -> Result<(File, EntryMeta)> {
        let (file, source) = if same_mount(&image, self.dir.fd()) {
            (image, None)
        } else {
            (File::from(self.unnamed(path)?), Some(image))
        };
        let id = FileId::of(&file).map_err(|e| Error::io(path, "stat the cache image", e))?;
        ledger.prove(token, Proof::File(id))?;
        let hashed = match &source {
            // Written through the loop device's direct I/O: on the disk,
            // not in the page cache.
            None => image_copy::content_hash_from_disk(&file),
            Some(source) => {
                image_copy::copy_image(source, &file, false).map_err(|e| Error::io(path, "copy the image into the cache", e))?;
                image_copy::content_hash(&file)
            }
        };
        let (hash, data_bytes) = hashed.map_err(|e| Error::io(path, "hash the cache image", e))?;
        meta.image_hash = hash;
        meta.image_bytes = file.metadata().map_err(|e| Error::io(path, "stat the cache image", e))?.len();
        meta.data_bytes = data_bytes;
        if meta.created_at.is_empty() {
            meta.created_at = crate::record::utc_now();
        }
        file.sync_all().map_err(|e| Error::io(path, "sync the cache image", e))?;
        Ok((file, meta))
    }

    /// Give the written image its name, then its json; the entry.
    fn publish(&self, file: File, meta: EntryMeta, path: &Path) -> Result<CacheEntry> {
        let key = meta.key.clone();
        let image_name = format!("{key}.img");
        match link_unnamed(&file, &self.dir, &image_name) {
            Ok(()) => {}
            Err(Errno::EXIST) => {
                if let Some(theirs) = self.lookup(&key)? {
                    return Ok(theirs);
                }
                // Theirs is being written, or was left incomplete: ours
                // serves this run without a name here, and goes when it
                // closes (a kept image once the run's release has taken
                // its name in the scratch folder).
                let file = reopen_read_only(&file).map_err(|e| Error::io(path, "reopen the cache image", e))?;
                return Ok(CacheEntry { meta, file, path: path.to_path_buf(), unnamed: true, _lock: None });
            }
            Err(e) => return Err(Error::io(path, "name the cache image", e.into())),
        }
        let json_name = format!("{key}.json");
        let json_path = self.path().join(&json_name);
        let mut text = serde_json::to_vec_pretty(&meta).map_err(|e| Error::failed(format!("cache entry {key}: {e}")))?;
        text.push(b'\n');
        let mut json = File::from(self.unnamed(&json_path)?);
        json.write_all(&text).and_then(|()| json.sync_all()).map_err(|e| Error::io(&json_path, "write", e))?;
        match link_unnamed(&json, &self.dir, &json_name) {
            Ok(()) => {}
            Err(Errno::EXIST) => {
                // A json left alone (its image removed while it was kept):
                // the image under this key is ours now, so it is stale.
                let _ = rustix::fs::unlinkat(self.dir.fd(), json_name.as_str(), AtFlags::empty());
                link_unnamed(&json, &self.dir, &json_name).map_err(|e| Error::io(&json_path, "name", e.into()))?;
            }
            Err(e) => return Err(Error::io(&json_path, "name", e.into())),
        }
        rustix::fs::fsync(self.dir.fd()).map_err(|e| Error::io(self.path(), "sync the cache folder", e.into()))?;
        let named = self.open_ours(&image_name)?;
        let same = named.as_ref().and_then(|f| FileId::of(f).ok()) == FileId::of(&file).ok();
        match named {
            Some(file) if same => Ok(CacheEntry { meta, file, path: path.to_path_buf(), unnamed: false, _lock: None }),
            _ => Err(Error::failed(format!("{}: not the cache image just written", path.display()))),
        }
    }

    /// An unnamed file in the folder, for `path`'s content.
    fn unnamed(&self, path: &Path) -> Result<OwnedFd> {
        let flags = OFlags::TMPFILE | OFlags::RDWR | OFlags::CLOEXEC;
        rustix::fs::openat(self.dir.fd(), ".", flags, Mode::from_raw_mode(0o600)).map_err(|e| match e {
            Errno::OPNOTSUPP | Errno::ISDIR | Errno::INVAL => Error::environment(format!(
                "{}: the cache folder's file system cannot make unnamed files (O_TMPFILE), which the cache needs so no half-written entry ever has a name; put --age-cache on ext4, xfs, btrfs or tmpfs",
                self.path().display()
            )),
            e => Error::io(path, "create in the cache folder", e.into()),
        })
    }

    /// `fslab cleanup --cache`: remove every entry no live run uses,
    /// complete or not, and nothing else (only names `KEY.img`,
    /// `KEY.json` and `KEY.lock`, only regular files, no symlink followed;
    /// each json before its image, so a kill midway leaves no
    /// complete-looking entry). A key whose lock a run holds (it uses or
    /// makes the entry) is left whole.
    pub fn clear(&self) -> Result<Cleared> {
        let listing = rustix::fs::Dir::read_from(self.dir.fd()).map_err(|e| Error::io(self.path(), "read the cache folder", e.into()))?;
        let mut keys = std::collections::BTreeSet::new();
        for entry in listing {
            let entry = entry.map_err(|e| Error::io(self.path(), "read the cache folder", e.into()))?;
            let Ok(name) = entry.file_name().to_str() else { continue };
            let key = parse_name(name).map(|(key, _)| key).or_else(|| name.strip_suffix(".lock").filter(|k| is_key(k)));
            keys.extend(key.map(str::to_string));
        }
        let me = rustix::process::geteuid().as_raw();
        let mut cleared = Cleared::default();
        for key in keys {
            let Some(lock) = KeyLock::try_exclusive(&self.dir, &key)? else {
                cleared.in_use += 1;
                continue;
            };
            let mut removed = false;
            for name in [format!("{key}.json"), format!("{key}.img")] {
                let stat = match rustix::fs::statat(self.dir.fd(), name.as_str(), AtFlags::SYMLINK_NOFOLLOW) {
                    Ok(stat) => stat,
                    Err(Errno::NOENT) => continue,
                    Err(e) => return Err(Error::io(&self.path().join(&name), "stat", e.into())),
                };
                if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile || stat.st_uid != me {
                    continue;
                }
                match rustix::fs::unlinkat(self.dir.fd(), name.as_str(), AtFlags::empty()) {
                    Ok(()) => {
                        cleared.bytes += stat.st_blocks as u64 * 512;
                        removed = true;
                    }
                    Err(Errno::NOENT) => {}
                    Err(e) => return Err(Error::io(&self.path().join(&name), "remove the cache file", e.into())),
                }
            }
            cleared.entries += usize::from(removed);
            lock.remove(&self.dir)?;
        }
        Ok(cleared)
    }
}

/// What [`ImageCache::clear`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Cleared {
    /// Entries removed (complete or not).
    pub entries: usize,
    /// Bytes freed, counted as the blocks the files held.
    pub bytes: u64,
    /// Entries left because a live run holds their key.
    pub in_use: usize,
}

/// Give `file` (unnamed, or a kept image named elsewhere on the folder's
/// mount) the name `name` in `dir` (`linkat`, which never replaces: an
/// existing name is `EEXIST`). By descriptor where the caller
/// may (`AT_EMPTY_PATH` wants `CAP_DAC_READ_SEARCH`), else through
/// `/proc/self/fd`.
fn link_unnamed(file: &File, dir: &OwnedDir, name: &str) -> rustix::io::Result<()> {
    match rustix::fs::linkat(file, "", dir.fd(), name, AtFlags::EMPTY_PATH) {
        Err(Errno::NOENT) => {
            let proc = format!("/proc/self/fd/{}", file.as_raw_fd());
            rustix::fs::linkat(rustix::fs::CWD, proc.as_str(), dir.fd(), name, AtFlags::SYMLINK_FOLLOW)
        }
        other => other,
    }
}

/// Whether a link in the folder open as `dir` can reach `file`: both on one
/// mount (`STATX_MNT_ID`; a bind mount of the same file system is another
/// mount, where `linkat` answers `EXDEV`). No when the kernel does not say.
fn same_mount(file: &File, dir: impl AsFd) -> bool {
    use rustix::fs::StatxFlags;
    let mount = |fd: rustix::fd::BorrowedFd<'_>| {
        rustix::fs::statx(fd, "", AtFlags::EMPTY_PATH, StatxFlags::MNT_ID)
            .ok()
            .filter(|st| st.stx_mask & StatxFlags::MNT_ID.bits() != 0)
            .map(|st| st.stx_mnt_id)
    };
    let theirs = mount(file.as_fd());
    theirs.is_some() && theirs == mount(dir.as_fd())
}

/// The file open as `file`, opened again read-only (through
/// `/proc/self/fd`, which reaches an unnamed file too).
fn reopen_read_only(file: &File) -> std::io::Result<File> {
    let proc = format!("/proc/self/fd/{}", file.as_fd().as_raw_fd());
    let fd = rustix::fs::open(proc.as_str(), OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty())?;
    Ok(File::from(fd))
}

#[cfg(test)]
mod tests;
