//! A kernel's module tree (`lib/modules/RELEASE`) and what a guest must
//! load from it, in order, for the devices and file systems it needs.
//!
//! Dependencies come from each module's own `.modinfo` ([`ModInfo`]): its
//! `depends` (symbols it uses) and its `softdep` lines (modules it wants
//! first without a symbol saying so — `ext4` and `libcrc32c` want
//! `crc32c`, `btrfs` wants `blake2b-256`, `xxhash64`, ...). A softdep or a
//! wanted name may be an alias (`crypto-crc32c`, `fs-xfs`): it is looked
//! up among every module's aliases, which are read once, when the first
//! such name comes. Module names compare with `-` and `_` alike, as the
//! kernel compares them; aliases compare exactly. What `modules.builtin`
//! lists is in the kernel already and is not loaded.
//!
//! A tree runs as kernel code in a guest QEMU starts as root, so it is
//! held to `ledger::given`'s rule: the tree and every folder above it
//! root's or the user's, and every folder and module file in it too,
//! writable by no one else, all reached from the tree's descriptor and
//! never through a symlink (a module that is a symlink is not indexed).
//! What a guest loads is read once, when the kernel is prepared
//! ([`ModuleTree::load`]), and must say what its `.modinfo` said when it
//! was resolved.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::modinfo::ModInfo;
use crate::error::{Error, Result};
use crate::ledger::given::{self, Child, GivenDir, GivenFile};

/// The endings a module file may have, and the tool that decompresses it.
const ENDINGS: &[(&str, Option<&str>)] =
    &[(".ko", None), (".ko.xz", Some("xz")), (".ko.zst", Some("zstd")), (".ko.gz", Some("gzip"))];

/// The most fslab reads of one module, as stored and unpacked: of Debian
/// 6.1's, xfs is 4.0 MiB and btrfs 3.7 MiB; the largest driver modules
/// are tens of MiB.
pub const MAX_MODULE_BYTES: u64 = 128 << 20;

/// The most fslab reads of `modules.builtin` or `modules.builtin.modinfo`
/// (Debian 6.1's: 6 KiB and 45 KiB).
const MAX_INDEX_BYTES: u64 = 16 << 20;

/// What messages call the tree.
const TREE: &str = "module tree";

/// The module tree of one kernel release, indexed by name.
#[derive(Debug)]
pub struct ModuleTree {
    root: GivenDir,
    release: String,
    /// Normalised module name → file, relative to `dir`.
    files: BTreeMap<String, PathBuf>,
    /// Normalised names of modules built into the kernel.
    builtin: BTreeSet<String>,
    /// Aliases of built-in modules (`modules.builtin.modinfo`).
    builtin_aliases: BTreeSet<String>,
    /// Each module's `.modinfo`, read when first needed.
    infos: BTreeMap<String, ModInfo>,
    /// Alias → modules, built once, when an alias is first looked up.
    aliases: Option<BTreeMap<String, Vec<String>>>,
    /// The modules read for guests so far, each read once.
    loaded: BTreeMap<String, Loaded>,
}

/// One module to load.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Module {
    /// Its name, normalised (`crc32c_intel`).
    pub name: String,
    /// Its file, relative to the tree (`kernel/fs/ext4/ext4.ko`).
    pub path: PathBuf,
}

/// A module read for guests: its name and its bytes (unpacked), as they
/// were when checked; what the initramfs holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Loaded {
    /// Its name, normalised.
    pub name: String,
    /// The plain ELF busybox's `insmod` takes.
    pub bytes: Arc<[u8]>,
}

/// What [`ModuleTree::resolve`] found for a list of wanted names.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Resolved {
    /// Modules to load, each after everything it depends on.
    pub order: Vec<Module>,
    /// Wanted names the kernel has built in (nothing to load).
    pub builtin: Vec<String>,
    /// Wanted names, and dependencies, found nowhere: neither a module,
    /// nor built in, nor an alias of either.
    pub missing: Vec<String>,
}

/// A module name as the kernel compares it: `-` and `_` alike.
pub fn normalise(name: &str) -> String {
    name.replace('-', "_")
}

impl ModuleTree {
    /// Index the tree at `dir` (`.../lib/modules/RELEASE`): every module
    /// file below `kernel/` (and `updates/`, `extra/`), and
    /// `modules.builtin`. A tree, or anything in it, that another user
    /// owns or may write is refused (exit 3).
    pub fn open(dir: &Path) -> Result<ModuleTree> {
        let root = given::open_dir(dir, TREE)?;
        let release = root.path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        if root.open_dir(Path::new("kernel"), TREE)?.is_none() {
            return Err(Error::environment(format!(
                "{}: not a kernel module tree (no kernel/ folder in it); name the tree with --kernel-modules DIR \
                 (lib/modules/RELEASE of the kernel's package)",
                dir.display()
            )));
        }
        let mut tree = ModuleTree {
            root,
            release,
            files: BTreeMap::new(),
            builtin: BTreeSet::new(),
            builtin_aliases: BTreeSet::new(),
            infos: BTreeMap::new(),
            aliases: None,
            loaded: BTreeMap::new(),
        };
        for top in ["kernel", "updates", "extra"] {
            if let Some(dir) = tree.root.open_dir(Path::new(top), TREE)? {
                tree.walk(&dir, Path::new(top))?;
            }
        }
        if let Some(text) = tree.index("modules.builtin")? {
            tree.builtin = String::from_utf8_lossy(&text).lines().filter_map(|l| module_name(Path::new(l.trim()))).collect();
        }
        if let Some(bytes) = tree.index("modules.builtin.modinfo")? {
            for entry in bytes.split(|b| *b == 0) {
                let entry = String::from_utf8_lossy(entry);
                if let Some((_, alias)) = entry.split_once(".alias=") {
                    tree.builtin_aliases.insert(alias.to_string());
                }
            }
        }
        Ok(tree)
    }

    /// Index the module files in `dir`, at `rel` in the tree, and below.
    fn walk(&mut self, dir: &GivenDir, rel: &Path) -> Result<()> {
        for child in dir.children(TREE)? {
            match child {
                Child::Dir(name) => {
                    if let Some(sub) = dir.open_dir(Path::new(&name), TREE)? {
                        self.walk(&sub, &rel.join(&name))?;
                    }
                }
                Child::File(name) => {
                    let rel = rel.join(name);
                    if let Some(module) = module_name(&rel) {
                        // The first found wins, as depmod's search order
                        // (kernel/ before updates/) does not: a rare clash,
                        // named by path.
                        self.files.entry(module).or_insert(rel);
                    }
                }
            }
        }
        Ok(())
    }

    /// The file `name` at the tree's top, `None` when absent.
    fn index(&self, name: &str) -> Result<Option<Vec<u8>>> {
        self.root.open_file(Path::new(name), TREE)?.map(|file| file.read(MAX_INDEX_BYTES)).transpose()
    }

    /// The release the tree is for (its folder's name).
    pub fn release(&self) -> &str {
        &self.release
    }

    /// The tree's folder, its canonical path.
    pub fn dir(&self) -> &Path {
        &self.root.path
    }

    /// How many module files the tree holds.
    pub fn module_count(&self) -> usize {
        self.files.len()
    }

    /// Whether `name` (a module name or alias) is built into the kernel.
    pub fn is_builtin(&self, name: &str) -> bool {
        self.builtin.contains(&normalise(name)) || self.builtin_aliases.contains(name)
    }

    /// The modules to load, in order, so that every name in `wanted` (a
    /// module name or an alias such as `fs-ext4`) is there: depends and
    /// `pre:` softdeps before a module, `post:` softdeps after it. A
    /// softdep found nowhere is left out (modprobe does the same); a
    /// wanted name or a `depends` found nowhere is `missing`.
    pub fn resolve(&mut self, wanted: &[&str]) -> Result<Resolved> {
        let mut resolved = Resolved::default();
        let mut seen = BTreeSet::new();
        for name in wanted {
            if self.is_builtin(name) {
                resolved.builtin.push(name.to_string());
                continue;
            }
            if !self.visit(name, &mut seen, &mut resolved)? {
                resolved.missing.push(name.to_string());
            }
        }
        Ok(resolved)
    }

    /// Add `name` (and what it needs) to `out`; false when it is found
    /// nowhere.
    fn visit(&mut self, name: &str, seen: &mut BTreeSet<String>, out: &mut Resolved) -> Result<bool> {
        let modules = self.lookup(name)?;
        if modules.is_empty() {
            return Ok(self.is_builtin(name));
        }
        for module in modules {
            if !seen.insert(module.clone()) {
                continue;
            }
            let info = self.info(&module)?;
            for pre in &info.pre {
                self.visit(pre, seen, out)?;
            }
            for dep in &info.depends {
                if !self.visit(dep, seen, out)? {
                    out.missing.push(format!("{dep} (needed by {module})"));
                }
            }
            out.order.push(Module { path: self.files[&module].clone(), name: module.clone() });
            for post in &info.post {
                self.visit(post, seen, out)?;
            }
        }
        Ok(true)
    }

    /// The modules `name` names: the module of that name, else every
    /// module with that alias; empty when none (or when built in).
    fn lookup(&mut self, name: &str) -> Result<Vec<String>> {
        let normal = normalise(name);
        if self.files.contains_key(&normal) {
            return Ok(vec![normal]);
        }
        if self.builtin.contains(&normal) {
            return Ok(Vec::new());
        }
        if self.aliases.is_none() {
            let mut aliases: BTreeMap<String, Vec<String>> = BTreeMap::new();
            let names: Vec<String> = self.files.keys().cloned().collect();
            for module in names {
                for alias in self.info(&module)?.aliases {
                    aliases.entry(alias).or_default().push(module.clone());
                }
            }
            self.aliases = Some(aliases);
        }
        Ok(self.aliases.as_ref().and_then(|a| a.get(name)).cloned().unwrap_or_default())
    }

    /// The `.modinfo` of a module in the tree, read once.
    fn info(&mut self, module: &str) -> Result<ModInfo> {
        if let Some(info) = self.infos.get(module) {
            return Ok(info.clone());
        }
        let file = self.open_module(module)?;
        let info = if file.path.extension().is_some_and(|e| e == "ko") {
            ModInfo::of_file(file.file(), file.size).map_err(|e| Error::io(&file.path, "read the module's .modinfo", e))?
        } else {
            of_bytes(&unpacked(&file)?, &file.path)?
        };
        self.infos.insert(module.to_string(), info.clone());
        Ok(info)
    }

    /// The module file of `module`, open and checked.
    fn open_module(&self, module: &str) -> Result<GivenFile> {
        let rel = &self.files[module];
        self.root.open_file(rel, TREE)?.ok_or_else(|| {
            Error::failed(format!("{}: gone from the module tree while fslab read it", self.root.path.join(rel).display()))
        })
    }

    /// Read `modules` for guests, each once, unpacked: what the guest will
    /// load, which must say in its `.modinfo` what it said when resolved
    /// (a module changed in between is refused, not loaded).
    pub fn load(&mut self, modules: &[Module]) -> Result<Vec<Loaded>> {
        let mut loaded = Vec::new();
        for module in modules {
            if let Some(read) = self.loaded.get(&module.name) {
                loaded.push(read.clone());
                continue;
            }
            let resolved = self.info(&module.name)?;
            let file = self.open_module(&module.name)?;
            let bytes = unpacked(&file)?;
            if of_bytes(&bytes, &file.path)? != resolved {
                return Err(Error::failed(format!(
                    "{}: changed while fslab read the module tree (its .modinfo is not what it was); try again",
                    file.path.display()
                )));
            }
            let read = Loaded { name: module.name.clone(), bytes: bytes.into() };
            self.loaded.insert(module.name.clone(), read.clone());
            loaded.push(read);
        }
        Ok(loaded)
    }
}

/// A module's `.modinfo` from its bytes, an error naming `path`.
fn of_bytes(bytes: &[u8], path: &Path) -> Result<ModInfo> {
    ModInfo::of_bytes(bytes).map_err(|e| Error::io(path, "read the module's .modinfo", e))
}

/// The module name a file path gives (`kernel/crypto/crc32c-intel.ko.xz`
/// → `crc32c_intel`), or `None` for any other file.
fn module_name(path: &Path) -> Option<String> {
    let file = path.file_name()?.to_str()?;
    ENDINGS.iter().find_map(|(ending, _)| file.strip_suffix(ending)).map(normalise)
}

/// A module file's bytes, read once and unpacked (`.ko.xz`, `.ko.zst`,
/// `.ko.gz` by `xz`, `zstd`, `gzip`, from memory): the guest's busybox
/// `insmod` takes plain ELF. At most [`MAX_MODULE_BYTES`] either way.
fn unpacked(file: &GivenFile) -> Result<Vec<u8>> {
    let bytes = file.read(MAX_MODULE_BYTES)?;
    let name = file.path.to_string_lossy();
    match ENDINGS.iter().find(|(ending, _)| name.ends_with(ending)) {
        Some((_, Some(tool))) => super::unpack::decompress(tool, &bytes, MAX_MODULE_BYTES, &file.path),
        _ => Ok(bytes),
    }
}

#[cfg(test)]
mod tests {
    use super::super::modinfo::write_fake_module;
    use super::*;

    /// A tree shaped like Debian 6.1's for ext4, xfs and the crc32c
    /// softdeps, with crc32 built in.
    fn tree() -> (tempfile::TempDir, PathBuf) {
        let dir = crate::test_temp::dir("");
        let root = dir.path().join("lib/modules/6.1.0-test");
        let module = |rel: &str, entries: &[&str]| write_fake_module(&root, rel, entries);
        module("kernel/fs/ext4/ext4.ko", &["softdep=pre: crypto-crc32c", "alias=fs-ext4", "depends=jbd2,mbcache,crc16"]);
        module("kernel/fs/jbd2/jbd2.ko", &["depends="]);
        module("kernel/fs/mbcache.ko", &["depends="]);
        module("kernel/lib/crc16.ko", &["depends="]);
        module("kernel/crypto/crc32c_generic.ko", &["alias=crypto-crc32c", "alias=crc32c", "depends="]);
        module("kernel/arch/x86/crypto/crc32c-intel.ko", &["alias=crypto-crc32c", "alias=crc32c", "depends="]);
        module("kernel/lib/libcrc32c.ko", &["softdep=pre: crc32c", "depends="]);
        module("kernel/fs/xfs/xfs.ko", &["alias=fs-xfs", "depends=libcrc32c,crc32_generic"]);
        module("kernel/fs/btrfs/btrfs.ko", &["softdep=pre: blake2b-256", "depends=libcrc32c,nowhere"]);
        std::fs::write(root.join("modules.builtin"), "kernel/lib/crc32.ko\nkernel/fs/9p/9p.ko\n").unwrap();
        std::fs::write(root.join("modules.builtin.modinfo"), "crc32_generic.alias=crc32_generic\0crc32.license=GPL\0").unwrap();
        (dir, root)
    }

    fn names(resolved: &Resolved) -> Vec<&str> {
        resolved.order.iter().map(|m| m.name.as_str()).collect()
    }

    #[test]
    fn dependencies_and_softdeps_load_first_each_once() {
        let (_dir, root) = tree();
        let mut tree = ModuleTree::open(&root).unwrap();
        assert_eq!(tree.release(), "6.1.0-test");
        assert_eq!(tree.module_count(), 9);
        let resolved = tree.resolve(&["fs-ext4", "xfs"]).unwrap();
        // ext4's softdep is an alias both crc32c modules answer to; both
        // load before ext4, and libcrc32c after crc32c.
        assert_eq!(
            names(&resolved),
            ["crc32c_generic", "crc32c_intel", "jbd2", "mbcache", "crc16", "ext4", "libcrc32c", "xfs"]
        );
        assert_eq!(resolved.order[5].path, Path::new("kernel/fs/ext4/ext4.ko"));
        assert!(resolved.missing.is_empty(), "{:?}", resolved.missing);
    }

    #[test]
    fn built_in_names_are_not_loaded_and_unknown_ones_are_missing() {
        let (_dir, root) = tree();
        let mut tree = ModuleTree::open(&root).unwrap();
        let resolved = tree.resolve(&["9p", "crc32", "nothing-such", "btrfs"]).unwrap();
        assert_eq!(resolved.builtin, ["9p", "crc32"]);
        // btrfs's softdep blake2b-256 is nowhere: left out, as modprobe does;
        // its depends `nowhere` is missing, named with who needs it.
        assert_eq!(names(&resolved), ["crc32c_generic", "crc32c_intel", "libcrc32c", "btrfs"]);
        assert_eq!(resolved.missing, ["nothing-such", "nowhere (needed by btrfs)"]);
    }

    #[test]
    fn a_folder_without_kernel_is_refused_with_the_flag_to_use() {
        let dir = crate::test_temp::dir("");
        let err = ModuleTree::open(dir.path()).unwrap_err();
        assert!(err.message.contains("--kernel-modules"), "{}", err.message);
    }

    #[test]
    fn names_compare_with_dashes_and_underscores_alike() {
        assert_eq!(module_name(Path::new("kernel/arch/x86/crypto/crc32c-intel.ko.xz")).as_deref(), Some("crc32c_intel"));
        assert_eq!(module_name(Path::new("kernel/x/modules.order")), None);
    }
}
