//! `fslab map FILE...`: the extent map of each file.
//!
//! Records are printed as they stream out of FIEMAP, so neither the text
//! nor the JSON list is ever held whole: JSON writes each file's
//! `extent_list` first and its figures after it, once they are known. A
//! bad file is reported and skipped; the others are still mapped.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde::Serialize;
use serde_json::json;

mod text;

use super::{MapArgs, Out, SCHEMA, format, write_error};
use crate::error::{Error, Result};
use crate::layout::extent_map::DEFAULT_BATCH;
use crate::layout::modelled::{ModelledFigures, ModelledRead};
use crate::layout::{self, AgGeometry, Extent, FileMap, FsInfo, RecordStep};
use crate::model::Profile;
use text::{TextRow, flag_list};
use crate::report::strip::StripBuilder;
use crate::sys::fiemap::FiemapBuffer;

/// Run `fslab map`.
pub fn run(args: &MapArgs) -> Result<ExitCode> {
    let disk = crate::plan::disk::named(args.disk.disk.as_deref(), args.disk.disk_profile.as_deref())?;
    let mut out = Out::stdout();
    let mut mapper = Mapper { args, buffer: FiemapBuffer::new(DEFAULT_BATCH), fs_cache: HashMap::new(), disk };
    let mut errors: Vec<(PathBuf, Error)> = Vec::new();
    match mapper.all(&mut out, &mut errors) {
        Ok(()) => {}
        Err(Failure::Closed) => return Ok(ExitCode::SUCCESS),
        Err(Failure::Fatal(e)) => return Err(e),
    }
    if let Err(e) = out.flush() {
        return write_error(e).map(|_| ExitCode::SUCCESS);
    }
    for (_, e) in &errors {
        eprintln!("fslab: {e}");
    }
    Ok(errors.iter().map(|(_, e)| e.kind).max().map_or(ExitCode::SUCCESS, |k| ExitCode::from(k.exit_code())))
}

enum Failure {
    Closed,
    Fatal(Error),
}

impl From<io::Error> for Failure {
    fn from(e: io::Error) -> Self {
        match write_error(e) {
            Ok(_) => Failure::Closed,
            Err(e) => Failure::Fatal(e),
        }
    }
}

struct Mapper<'a> {
    args: &'a MapArgs,
    buffer: FiemapBuffer,
    fs_cache: HashMap<u64, FsInfo>,
    /// The modelled drive each file is read on (`--disk`).
    disk: Option<Profile>,
}

/// Where one file's records go as they stream.
enum Sink {
    Text,
    Json { first: bool },
    Figures,
}

impl Mapper<'_> {
    fn all(&mut self, out: &mut Out, errors: &mut Vec<(PathBuf, Error)>) -> std::result::Result<(), Failure> {
        let json = self.args.json;
        if json {
            write!(out.writer(), "{{\"schema\":\"{SCHEMA}\",")?;
            if let Some(disk) = &self.disk {
                write!(out.writer(), "\"disk\":{},", json!(disk.name))?;
            }
            write!(out.writer(), "\"files\":[")?;
        }
        let mut printed = 0usize;
        for (index, path) in self.args.files.iter().enumerate() {
            let svg_out = self.args.svg.as_ref().map(|base| numbered(base, index, self.args.files.len()));
            match self.one(out, path, svg_out.as_deref(), json && printed > 0) {
                Ok(()) => printed += 1,
                Err(OneFailure::Input(e)) => errors.push((path.clone(), e)),
                Err(OneFailure::Output(f)) => return Err(f),
            }
        }
        if json {
            let list: Vec<_> =
                errors.iter().map(|(p, e)| json!({"path": p.to_string_lossy(), "error": e.message})).collect();
            write!(out.writer(), "],\"errors\":{}}}", serde_json::Value::Array(list))?;
            out.writer().write_all(b"\n")?;
        }
        Ok(())
    }

    /// Map one file. Input errors are returned before anything of the file
    /// is written; `comma` asks for a JSON separator before its entry.
    fn one(
        &mut self,
        out: &mut Out,
        path: &Path,
        svg: Option<&Path>,
        comma: bool,
    ) -> std::result::Result<(), OneFailure> {
        // A link is followed only by the rule for every path fslab is
        // given (`ledger::walk`): another user's is refused (exit 2).
        super::store_place::named_file(path).map_err(OneFailure::Input)?;
        let (file, meta) = layout::open_regular(path).map_err(OneFailure::Input)?;
        let (size, dev) = (meta.len(), std::os::unix::fs::MetadataExt::dev(&meta));
        let fs = match self.fs_cache.entry(dev) {
            Entry::Occupied(known) => known.into_mut(),
            Entry::Vacant(slot) => {
                slot.insert(FsInfo::probe(&file).map_err(|e| OneFailure::Input(Error::io(path, "statfs", e)))?)
            }
        };
        // JSON keeps the name as it is; text shows it escaped.
        let display = path.to_string_lossy().into_owned();
        let shown = crate::text::escape(&display).into_owned();
        let sink = if self.args.no_list {
            Sink::Figures
        } else if self.args.json {
            Sink::Json { first: true }
        } else {
            Sink::Text
        };
        // Probe FIEMAP before printing anything, so an unsupported file
        // system is an input error with no half-written entry.
        self.buffer.map(&file, 0, 0).map_err(|e| OneFailure::Input(Error::io(path, "FIEMAP", e)))?;

        let w = out.writer();
        if comma {
            w.write_all(b",")?;
        }
        match sink {
            Sink::Text => {
                write!(
                    w,
                    "{shown}: {}, block size {}, size {} ({} bytes, {} blocks)",
                    fs.fs_type,
                    fs.block_size,
                    format::bytes(size),
                    size,
                    size.div_ceil(u64::from(fs.block_size))
                )?;
                if let Some(ag) = &fs.xfs_ag {
                    write!(w, ", {} allocation groups of {} blocks", ag.ag_count, ag.ag_blocks)?;
                }
                writeln!(w)?;
                TextRow::new(self.args.units, fs, size).write_header(w)?;
            }
            Sink::Json { .. } => {
                let head = json!({"path": display, "size": size, "block_size": fs.block_size, "fs_type": fs.fs_type});
                let head = head.to_string();
                write!(w, "{},\"extent_list\":[", &head[..head.len() - 1])?;
            }
            Sink::Figures => {}
        }

        let mut strip = svg.map(|_| StripBuilder::new(size, fs.total_bytes, format!("{display} — {}", fs.fs_type)).block_size(fs.block_size.into()));
        let text = TextRow::new(self.args.units, fs, size);
        let xfs_ag = fs.xfs_ag;
        let mut index = 0u64;
        let mut sink = sink;
        let rule = fs.rule_for(&file);
        let mut model = self.disk.as_ref().map(ModelledRead::new);
        let mapped = layout::map_open_file(&file, fs.block_size, &mut self.buffer, self.args.sync, |e, step| {
            if let Some(model) = model.as_mut() {
                model.record(e, &step);
            }
            if let Some(strip) = strip.as_mut() {
                strip.add(e, step.starts_extent);
            }
            match &mut sink {
                Sink::Text => text.write(w, index, e, step)?,
                Sink::Json { first } => {
                    if !*first {
                        w.write_all(b",")?;
                    }
                    *first = false;
                    write_json_record(w, e, step, xfs_ag.as_ref())?;
                }
                Sink::Figures => {}
            }
            index += 1;
            Ok(())
        });
        let figures = match mapped {
            Ok(acc) => acc.finish(size),
            // A failure mid-stream after output began: the entry is broken,
            // so this is fatal rather than skippable.
            Err(e) => return Err(OneFailure::Output(Failure::Fatal(Error::io(path, "FIEMAP", e)))),
        };
        let map = FileMap {
            path: display.clone(),
            size,
            block_size: fs.block_size,
            fs_type: fs.fs_type.clone(),
            perfection: rule.perfection(size),
            perfection_rule: rule.text.clone(),
            figures,
            modelled: model.map(|mut m| {
                m.end_file();
                ModelledFigures::from_cost(m.finish())
            }),
        };

        if !self.args.json {
            write_text_summary(w, &shown, &map)?;
            if let (Some(m), Some(disk)) = (&map.modelled, &self.disk) {
                writeln!(w, "  modelled read {}", modelled_words(m, &disk.name, ""))?;
            }
        } else {
            let mut value = serde_json::to_value(&map).map_err(|e| OneFailure::Output(Failure::Fatal(Error::failed(e.to_string()))))?;
            if let Sink::Json { .. } = sink {
                // The head fields went out before the list; write the rest.
                if let Some(fields) = value.as_object_mut() {
                    for key in ["path", "size", "block_size", "fs_type"] {
                        fields.remove(key);
                    }
                }
                let tail = value.to_string();
                write!(w, "],{}", &tail[1..])?;
            } else {
                write!(w, "{value}")?;
            }
        }
        if let (Some(strip), Some(svg)) = (strip, svg) {
            super::output::write_whole(svg, &strip.finish(), "write SVG")
                .map_err(|e| OneFailure::Output(Failure::Fatal(e)))?;
        }
        Ok(())
    }
}

enum OneFailure {
    /// The file cannot be mapped; nothing of it was printed.
    Input(Error),
    /// Writing failed, or mapping failed after output began.
    Output(Failure),
}

impl From<io::Error> for OneFailure {
    fn from(e: io::Error) -> Self {
        OneFailure::Output(Failure::from(e))
    }
}

fn write_json_record(w: &mut impl Write, e: &Extent, step: RecordStep, ag: Option<&AgGeometry>) -> io::Result<()> {
    #[derive(Serialize)]
    struct Record<'a> {
        logical: u64,
        physical: Option<u64>,
        length: u64,
        flags: &'a [&'a str],
        /// xfs only: the allocation group, `null` where the location is
        /// unknown.
        #[serde(skip_serializing_if = "Option::is_none")]
        ag: Option<Option<u64>>,
        /// xfs only: bytes from the group's start.
        #[serde(skip_serializing_if = "Option::is_none")]
        ag_offset: Option<Option<u64>>,
    }
    let mut names = [""; 13];
    let mut n = 0;
    for name in flag_list(e, step) {
        names[n] = name;
        n += 1;
    }
    let placed = ag.map(|g| g.locate(e.physical).filter(|_| e.on_device()));
    let record = Record {
        logical: e.logical,
        physical: e.location_known().then_some(e.physical),
        length: e.length,
        flags: &names[..n],
        ag: placed.map(|p| p.map(|(group, _)| group)),
        ag_offset: placed.map(|p| p.map(|(_, offset)| offset)),
    };
    serde_json::to_writer(w, &record).map_err(io::Error::other)
}

/// The figures under a file's records; `shown` is its path as a terminal
/// shows it.
fn write_text_summary(w: &mut impl Write, shown: &str, map: &FileMap) -> io::Result<()> {
    let f = &map.figures;
    let perfection = match map.perfection {
        Some(p) => format!("perfection would be {p}"),
        None => "perfection unknown".to_string(),
    };
    writeln!(w, "{shown}: {} extents, {perfection}, layout score {}", f.extents, format::score(f.layout_score))?;
    let mut flags = Vec::new();
    for (name, count) in [
        ("unwritten", f.flags.unwritten),
        ("delalloc", f.flags.delalloc),
        ("unknown", f.flags.unknown),
        ("inline", f.flags.inline),
        ("shared", f.flags.shared),
        ("encoded", f.flags.encoded),
        ("last", f.flags.last),
    ] {
        if count > 0 {
            flags.push(format!("{name} {count}"));
        }
    }
    let past_eof = if f.past_eof_bytes > 0 || f.past_eof_records > 0 {
        format!("; {} past EOF, not in the layout score", format::bytes(f.past_eof_bytes))
    } else {
        String::new()
    };
    writeln!(
        w,
        "  {} records, {} holes ({}), {} backward jumps, seek distance {}{past_eof}\n  flags: {}; rule: {}",
        f.records,
        f.holes,
        format::bytes(f.hole_bytes),
        f.backward_jumps,
        format::bytes(f.seek_distance),
        if flags.is_empty() { "none".to_string() } else { flags.join(", ") },
        map.perfection_rule
    )
}

/// A modelled read in words, after `modelled read`: `575 ms on hdd-7200;
/// 573 ms in one piece, ratio 1.003`, `how` said after the drive; or why
/// there is none.
pub(super) fn modelled_words(m: &ModelledFigures, disk: &str, how: &str) -> String {
    let seconds = |s: f64| crate::compare::format::value(s, "s");
    match (m.modelled_read_s, m.modelled_ideal_s, &m.modelled_missing) {
        (Some(read), Some(ideal), _) => {
            let ratio = m.modelled_read_ratio.map_or_else(|| "-".to_string(), ratio_words);
            format!("{} on {disk}{how}; {} in one piece, ratio {ratio}", seconds(read), seconds(ideal))
        }
        (_, _, why) => format!("on {disk}: none, {}", why.as_deref().unwrap_or("no reason given")),
    }
}

/// A modelled read's ratio to its ideal: three decimals below 10, where a
/// file a few extents off one piece reads `1.003`, not `1`; fewer above.
pub(super) fn ratio_words(ratio: f64) -> String {
    if ratio < 10.0 { format!("{ratio:.3}") } else { crate::units::short_number(ratio) }
}

/// `base` for one file; `base` with `-N` before its extension for several.
fn numbered(base: &Path, index: usize, count: usize) -> PathBuf {
    if count <= 1 {
        return base.to_path_buf();
    }
    let stem = base.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let name = match base.extension() {
        Some(ext) => format!("{stem}-{}.{}", index + 1, ext.to_string_lossy()),
        None => format!("{stem}-{}", index + 1),
    };
    base.with_file_name(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn svg_names_are_numbered_for_several_files() {
        assert_eq!(numbered(Path::new("/t/m.svg"), 0, 1), PathBuf::from("/t/m.svg"));
        assert_eq!(numbered(Path::new("/t/m.svg"), 1, 3), PathBuf::from("/t/m-2.svg"));
        assert_eq!(numbered(Path::new("m"), 0, 2), PathBuf::from("m-1"));
    }
}
