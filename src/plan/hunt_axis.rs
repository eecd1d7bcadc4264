//! `--vary KEY=LO..HI` read into what `hunt` varies and the axis it
//! searches: `memory` (a size, geometric), a sysctl key (sizes for
//! `*_bytes` keys, else a plain number on a linear axis), `fill` (whole
//! percent, linear: how full the target starts), or a numeric parameter
//! of the scenario (sizes and counts, geometric).

use crate::harness::hunt::{Axis, Scale, Start, size_grain};
use crate::scenario::Scenario;
use crate::scenario::params::ParamKind;

/// What a hunt varies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    /// The work's memory limit.
    Memory,
    /// A sysctl, per case.
    Sysctl,
    /// A parameter of the scenario.
    Param(&'static str),
    /// How full the target starts (`--fill`), in whole percent.
    Fill,
}

/// `--vary` read: the key's name, what it is, and the axis.
#[derive(Debug, Clone)]
pub struct Vary {
    /// The key as given (`memory`, `vm.dirty_background_bytes`, `size`).
    pub name: String,
    /// What it is.
    pub key: Key,
    /// Whether its values are sizes (shown `256M`, said `256 MiB`).
    pub sizes: bool,
    /// The axis searched.
    pub axis: Axis,
    /// Which end is cheap to measure: HI for memory (no reclaim), LO for a
    /// size parameter (a small file); both ends first otherwise.
    pub start: Start,
}

impl Vary {
    /// A value as the case records it and the work is given it: `256M`
    /// for sizes on a MiB (`K` on a KiB), else the number.
    pub fn shown(&self, value: u64) -> String {
        if self.key == Key::Fill {
            format!("{value}%")
        } else if !self.sizes {
            value.to_string()
        } else if value % (1 << 30) == 0 {
            format!("{}G", value >> 30)
        } else if value % (1 << 20) == 0 {
            format!("{}M", value >> 20)
        } else if value % 1024 == 0 {
            format!("{}K", value >> 10)
        } else {
            value.to_string()
        }
    }

    /// A value for people: `256 MiB`, or the number.
    pub fn said(&self, value: u64) -> String {
        if self.key == Key::Fill {
            format!("{value}%")
        } else if self.sizes {
            crate::units::bytes_short(value)
        } else {
            value.to_string()
        }
    }
}

/// Read `--vary KEY=LO..HI` for `scenario`.
pub fn parse(text: &str, scenario: &dyn Scenario) -> Result<Vary, String> {
    let bad = |why: &str| format!("--vary {text}: {why}");
    let (name, range) = text.split_once('=').ok_or_else(|| bad("give KEY=LO..HI (for example memory=128M..1G)"))?;
    let (lo, hi) = range.split_once("..").ok_or_else(|| bad("give the range as LO..HI (for example 128M..1G)"))?;
    let name = name.trim();
    let param = scenario.params().iter().find(|p| p.name == name);
    let (key, sizes, scale) = if name == "memory" {
        (Key::Memory, true, Scale::Geometric)
    } else if name == "fill" {
        (Key::Fill, false, Scale::Linear)
    } else if let Some(spec) = param {
        match spec.kind {
            ParamKind::Size => (Key::Param(spec.name), true, Scale::Geometric),
            ParamKind::Count { .. } => (Key::Param(spec.name), false, Scale::Geometric),
            _ => return Err(bad(&format!("{name} is a choice, not a number: only numbers and sizes can be hunted"))),
        }
    } else if name.contains('.') {
        (Key::Sysctl, name.ends_with("_bytes"), if name.ends_with("_bytes") { Scale::Geometric } else { Scale::Linear })
    } else {
        let params: Vec<&str> = scenario.params().iter().map(|p| p.name).collect();
        return Err(bad(&format!(
            "`{name}` is not memory, fill, a sysctl key or a parameter of {} ({})",
            scenario.name(),
            params.join(", ")
        )));
    };
    let read = |v: &str| -> Result<u64, String> {
        let v = v.trim();
        let v = if key == Key::Fill { v.trim_end_matches('%') } else { v };
        if sizes { crate::units::parse_bytes(v) } else { v.parse::<u64>().map_err(|_| format!("`{v}` is not a whole number")) }
    };
    let (lo, hi) = (read(lo).map_err(|e| bad(&e))?, read(hi).map_err(|e| bad(&e))?);
    if lo >= hi {
        return Err(bad("LO must be below HI"));
    }
    if scale == Scale::Geometric && lo == 0 {
        return Err(bad("LO must be more than 0 (the steps are geometric)"));
    }
    let grain = if sizes { size_grain(lo) } else { 1 };
    if key == Key::Fill && (lo == 0 || hi > 98) {
        return Err(bad("give fill levels in whole percent from 1 to 98 (the work needs room)"));
    }
    let start = match key {
        Key::Memory => Start::FromHigh,
        // An emptier target is quicker to age and fill.
        Key::Fill => Start::FromLow,
        Key::Param(_) if sizes => Start::FromLow,
        _ => Start::BothEnds,
    };
    Ok(Vary { name: name.to_string(), key, sizes, axis: Axis { lo, hi, scale, grain }, start })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mmap_fill() -> &'static dyn Scenario {
        crate::scenario::find("mmap-fill").unwrap()
    }

    #[test]
    fn keys_are_memory_sysctls_or_numeric_parameters() {
        let v = parse("memory=128M..1G", mmap_fill()).unwrap();
        assert_eq!((v.key, v.axis), (Key::Memory, Axis { lo: 128 << 20, hi: 1 << 30, scale: Scale::Geometric, grain: 1 << 20 }));
        assert_eq!((v.shown(288 << 20), v.said(288 << 20), v.shown(1 << 30)), ("288M".to_string(), "288 MiB".to_string(), "1G".to_string()));
        assert_eq!(v.start, Start::FromHigh);
        let v = parse("vm.dirty_ratio=1..40", mmap_fill()).unwrap();
        assert_eq!((v.key, v.axis.scale, v.shown(20)), (Key::Sysctl, Scale::Linear, "20".to_string()));
        let v = parse("vm.dirty_background_bytes=4M..1G", mmap_fill()).unwrap();
        assert_eq!((v.axis.scale, v.axis.grain), (Scale::Geometric, 4096));
        assert_eq!(parse("size=16M..1G", mmap_fill()).unwrap().key, Key::Param("size"));
        assert!(parse("order=1..2", mmap_fill()).unwrap_err().contains("choice"));
        assert!(parse("bogus=1..2", mmap_fill()).unwrap_err().contains("not memory"));
        assert!(parse("memory=1G..128M", mmap_fill()).unwrap_err().contains("below"));
        assert!(parse("memory=128M", mmap_fill()).unwrap_err().contains("LO..HI"));
        let v = parse("fill=10%..95%", mmap_fill()).unwrap();
        assert_eq!((v.key, v.axis.scale, v.shown(60), v.start), (Key::Fill, Scale::Linear, "60%".to_string(), Start::FromLow));
        assert!(parse("fill=0..99", mmap_fill()).unwrap_err().contains("1 to 98"));
    }
}
