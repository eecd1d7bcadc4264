//! A disk profile file: one more drive for the model, in JSON
//! (`examples/disk-profile.json`):
//!
//! ```json
//! {
//!   "name": "barracuda-7200.12",
//!   "about": "a 2009 1 TB desktop drive",
//!   "source": "Seagate Barracuda 7200.12 product manual: ...",
//!   "disk": {
//!     "capacity_bytes": 1000000000000, "rpm": 7200, "heads": 4,
//!     "track_to_track_s": 0.0008, "average_seek_s": 0.0085, "full_stroke_s": 0.0145,
//!     "outer_bytes_per_s": 125000000, "inner_bytes_per_s": 62500000,
//!     "buffer_bytes": 33554432, "segments": 16, "write_cache": true, "queue_depth": 32
//!   }
//! }
//! ```
//!
//! or `"ssd": {capacity_bytes, read_latency_s, write_latency_s,
//! read_bytes_per_s, write_bytes_per_s, parallel, flush_s,
//! power_loss_protection, queue_depth}` in place of `"disk"`. Every field
//! is required and in base units; unknown fields are refused, so a
//! misspelt one is never a default. Every error is bad input (exit 2)
//! naming the file and the field.

use std::io::Read as _;
use std::os::unix::fs::{MetadataExt as _, OpenOptionsExt as _};
use std::path::Path;

use serde::Deserialize;
use serde_json::{Map, Value};

use super::builtin;
use super::profile::{DiskSpec, Drive, Profile, SsdSpec};
use crate::error::{Error, Result};

/// The largest profile file read (a profile is a few hundred bytes).
pub const MAX_PROFILE_FILE_BYTES: u64 = 64 << 10;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawProfile {
    name: String,
    about: String,
    source: String,
    disk: Option<DiskSpec>,
    ssd: Option<SsdSpec>,
}

/// Parse and check a profile's JSON `text`; `shown` names its file in
/// errors. A name a built-in profile has is refused.
pub fn parse(text: &str, shown: &str) -> Result<Profile> {
    let refuse = |why: String| Error::usage(format!("disk profile {shown}: {why}"));
    let raw: RawProfile = serde_json::from_str(text).map_err(|e| match serde_json::from_str(text).ok().and_then(|v| culprit(&v)) {
        Some(field) => refuse(format!("{field}: {e}")),
        None => refuse(format!("{e} (fields: name, about, source, and disk or ssd; see examples/disk-profile.json)")),
    })?;
    let drive = match (raw.disk, raw.ssd) {
        (Some(disk), None) => Drive::Disk(disk),
        (None, Some(ssd)) => Drive::Ssd(ssd),
        (Some(_), Some(_)) => return Err(refuse("give `disk` or `ssd`, not both".into())),
        (None, None) => return Err(refuse("give the drive's figures as `disk` or as `ssd`".into())),
    };
    let profile = Profile { name: raw.name, about: raw.about, source: raw.source, drive };
    profile.check().map_err(refuse)?;
    if builtin::find(&profile.name).is_some() {
        return Err(refuse(format!("name = {:?}: a built-in profile has that name; give yours another", profile.name)));
    }
    Ok(profile)
}

/// The first field of a profile that does not parse, as `disk.rpm`: each
/// is tried alone beside a built-in profile's fields, so a value of the
/// wrong type or out of its type's range is named by its field (serde names
/// unknown and missing fields itself). `None` when no field alone fails.
fn culprit(value: &Value) -> Option<String> {
    let fits = |trial: &Map<String, Value>| serde_json::from_value::<RawProfile>(Value::Object(trial.clone())).is_ok();
    let mut good = Map::new();
    for p in [builtin::find("hdd-7200"), builtin::find("ssd-plp")].into_iter().flatten() {
        if let Value::Object(fields) = serde_json::to_value(p).ok()? {
            good.extend(fields);
        }
    }
    let base: Map<String, Value> = good.iter().filter(|(_, v)| v.is_string()).map(|(k, v)| (k.clone(), v.clone())).collect();
    for (key, given) in value.as_object()? {
        let Some(template) = good.get(key) else { continue };
        let alone = |v: &Value| {
            let mut trial = base.clone();
            trial.insert(key.clone(), v.clone());
            fits(&trial)
        };
        if alone(given) {
            continue;
        }
        if let (Some(inner), Some(template)) = (given.as_object(), template.as_object()) {
            for (field, v) in inner.iter().filter(|(field, _)| template.contains_key(*field)) {
                let mut one = template.clone();
                one.insert(field.clone(), v.clone());
                if !alone(&Value::Object(one)) {
                    return Some(format!("{key}.{field}"));
                }
            }
        }
        return Some(key.clone());
    }
    None
}

/// Read and check the profile file at `path`: opened without following a
/// symbolic link or waiting on a FIFO, a regular file of at most
/// [`MAX_PROFILE_FILE_BYTES`] owned by root or the invoking user
/// (`SUDO_UID`, else the real user), as UTF-8 JSON. Errors name `named`,
/// the path as the user gave it: a caller that lets a path's folders hold
/// symbolic links resolves it first by the rule for named files and
/// passes the path it found as `path`.
pub fn load(path: &Path, named: &Path) -> Result<Profile> {
    let shown = crate::text::path(named);
    let refuse = |why: String| Error::usage(format!("disk profile {shown}: {why}"));
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| Error::io(named, "open the disk profile", e))?;
    let meta = file.metadata().map_err(|e| Error::io(named, "read the disk profile", e))?;
    if !meta.is_file() {
        let what = crate::error::file_type_words(&meta.file_type());
        return Err(refuse(format!("{what}, not a regular file; give a JSON profile file")));
    }
    let user = std::env::var("SUDO_UID").ok().and_then(|u| u.parse::<u32>().ok());
    let me = rustix::process::getuid().as_raw();
    if meta.uid() != 0 && meta.uid() != me && Some(meta.uid()) != user {
        return Err(refuse(format!("owned by uid {}, neither root nor you; copy it to a file you own", meta.uid())));
    }
    let mut bytes = Vec::new();
    (&mut file)
        .take(MAX_PROFILE_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(named, "read the disk profile", e))?;
    if bytes.len() as u64 > MAX_PROFILE_FILE_BYTES {
        return Err(refuse(format!("over {MAX_PROFILE_FILE_BYTES} bytes; a profile is a few hundred")));
    }
    let text = String::from_utf8(bytes).map_err(|_| refuse("not UTF-8 text; give a JSON profile".into()))?;
    parse(&text, &shown)
}

#[cfg(test)]
mod tests {
    use super::*;

    const EXAMPLE: &str = include_str!("../../examples/disk-profile.json");

    #[test]
    fn the_example_profile_parses_and_models() {
        let p = parse(EXAMPLE, "example").unwrap();
        assert_eq!(p.name, "barracuda-7200.12");
        let Drive::Disk(d) = &p.drive else { panic!("a disk") };
        assert_eq!(d.rpm, 7200);
        let m = super::super::replay(&p, [super::super::Request::read(0, 1 << 20)], 1).unwrap();
        assert!(m.seconds > 0.0);
    }

    #[test]
    fn unknown_fields_and_bad_values_are_refused_naming_file_and_field() {
        let misspelt = EXAMPLE.replace("\"heads\"", "\"head\"");
        let e = parse(&misspelt, "mine.json").unwrap_err();
        assert_eq!(e.kind, crate::error::ErrorKind::Usage);
        assert!(e.message.contains("mine.json") && e.message.contains("unknown field `head`"), "{}", e.message);
        let top = EXAMPLE.replacen("\"about\"", "\"aboot\"", 1);
        let e = parse(&top, "mine.json").unwrap_err();
        assert!(e.message.contains("unknown field `aboot`"), "{}", e.message);
        let slow = EXAMPLE.replace("\"inner_bytes_per_s\": 62500000", "\"inner_bytes_per_s\": 250000000");
        let e = parse(&slow, "mine.json").unwrap_err();
        assert!(e.message.contains("disk.inner_bytes_per_s"), "{}", e.message);
        let stroke = EXAMPLE.replace("\"full_stroke_s\": 0.0145", "\"full_stroke_s\": 0.009");
        let e = parse(&stroke, "mine.json").unwrap_err();
        assert!(e.message.contains("disk.full_stroke_s") && e.message.contains("needs a full stroke from"), "{}", e.message);
        for (from, to, field) in [
            ("\"rpm\": 7200", "\"rpm\": \"7200\"", "disk.rpm: invalid type: string \"7200\""),
            ("\"heads\": 4", "\"heads\": -4", "disk.heads: invalid value: integer `-4`"),
            ("\"write_cache\": true", "\"write_cache\": 1", "disk.write_cache: invalid type: integer `1`"),
            ("\"name\": \"barracuda-7200.12\"", "\"name\": 7", "name: invalid type: integer `7`"),
            ("\"disk\": {", "\"disk\": [{", "disk: invalid type"),
        ] {
            let text = if from.ends_with('{') { EXAMPLE.replacen(from, to, 1).replacen("}\n}", "}]\n}", 1) } else { EXAMPLE.replacen(from, to, 1) };
            let e = parse(&text, "mine.json").unwrap_err();
            assert!(e.message.starts_with(&format!("disk profile mine.json: {field}")), "{field}: {}", e.message);
        }
        let missing = EXAMPLE.replacen("\"heads\": 4,", "", 1);
        let e = parse(&missing, "mine.json").unwrap_err();
        assert!(e.message.contains("missing field `heads`"), "{}", e.message);
        let both = EXAMPLE.replacen("\"disk\"", "\"ssd\": null, \"disk\"", 1);
        assert!(parse(&both, "x").is_ok(), "null is absent");
        let e = parse(r#"{"name":"x","about":"","source":""}"#, "x").unwrap_err();
        assert!(e.message.contains("`disk` or as `ssd`"), "{}", e.message);
        let e = parse(&EXAMPLE.replace("barracuda-7200.12", "hdd-7200"), "x").unwrap_err();
        assert!(e.message.contains("built-in"), "{}", e.message);
        let e = parse(&EXAMPLE.replace("barracuda-7200.12", "Bad Name"), "x").unwrap_err();
        assert!(e.message.contains("name ="), "{}", e.message);
    }

    #[test]
    fn a_file_is_read_only_when_regular_and_small() {
        let dir = tempfile::tempdir().unwrap();
        let good = dir.path().join("disk.json");
        std::fs::write(&good, EXAMPLE).unwrap();
        assert_eq!(load(&good, &good).unwrap().name, "barracuda-7200.12");
        let link = dir.path().join("link.json");
        std::os::unix::fs::symlink(&good, &link).unwrap();
        assert_eq!(load(&link, &link).unwrap_err().kind, crate::error::ErrorKind::Usage, "a link is not followed");
        let e = load(dir.path(), dir.path()).unwrap_err();
        assert!(e.message.contains("a directory"), "{}", e.message);
        let big = dir.path().join("big.json");
        std::fs::write(&big, vec![b' '; (MAX_PROFILE_FILE_BYTES + 1) as usize]).unwrap();
        assert!(load(&big, &big).unwrap_err().message.contains("over"));
        assert_eq!(load(&dir.path().join("none.json"), Path::new("none.json")).unwrap_err().kind, crate::error::ErrorKind::Usage);
    }
}
