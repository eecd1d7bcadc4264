//! Named figures: what a probe or a scenario measured, with its unit, which
//! direction is better, and whether it is exact or a timing.
//!
//! This is the one vocabulary shared by probes (which fill it), scenarios,
//! the store and `compare` (which read it). A figure that could not be
//! measured is kept with `value: None` and a reason, never as 0: a missing
//! journal-commit count and a zero one mean different things.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

/// Which direction of a figure is an improvement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Better {
    /// Smaller is better (seconds, I/Os, extents).
    Lower,
    /// Larger is better (MiB/s, layout score).
    Higher,
}

impl Better {
    /// The word JSON and the store use: `lower` or `higher`.
    pub fn as_str(self) -> &'static str {
        match self {
            Better::Lower => "lower",
            Better::Higher => "higher",
        }
    }

    /// The direction a word names, if it names one.
    pub fn from_word(word: &str) -> Option<Better> {
        [Better::Lower, Better::Higher].into_iter().find(|b| b.as_str() == word)
    }
}

/// Whether a figure repeats exactly on a rerun or is a noisy timing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// A count or a layout figure: compared exactly.
    Exact,
    /// A time or a rate: compared with statistics over repeats.
    Timing,
}

impl Kind {
    /// The word JSON and the store use: `exact` or `timing`.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Exact => "exact",
            Kind::Timing => "timing",
        }
    }

    /// The kind a word names, if it names one.
    pub fn from_word(word: &str) -> Option<Kind> {
        [Kind::Exact, Kind::Timing].into_iter().find(|k| k.as_str() == word)
    }
}

/// One measured figure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Figure {
    /// The value in base units (`s`, `bytes`, `count`, ...); `None` when it
    /// could not be measured.
    pub value: Option<f64>,
    /// The base unit, one of [`UNITS`](super::UNITS): `s`, `bytes`,
    /// `count`, `MiB/s`, `ratio`, ...
    pub unit: Cow<'static, str>,
    /// Which direction is better.
    pub better: Better,
    /// Exact or timing.
    pub kind: Kind,
    /// Why the value is missing, when it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub missing: Option<String>,
}

/// Figures by name, in the order they were added (which is the order
/// tables print them in).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Figures {
    figures: Vec<(String, Figure)>,
}

impl Serialize for Figures {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(Some(self.figures.len()))?;
        for (name, figure) in &self.figures {
            map.serialize_entry(name, figure)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for Figures {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct InOrder;
        impl<'de> serde::de::Visitor<'de> for InOrder {
            type Value = Figures;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a map of figure names to figures")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Figures, A::Error> {
                let mut figures = Figures::new();
                while let Some((name, figure)) = map.next_entry::<String, Figure>()? {
                    figures.insert(&name, figure);
                }
                Ok(figures)
            }
        }
        deserializer.deserialize_map(InOrder)
    }
}

impl Figures {
    /// No figures yet.
    pub fn new() -> Self {
        Figures::default()
    }

    /// Add (or replace) a measured figure.
    pub fn set(&mut self, name: &str, value: f64, unit: &'static str, better: Better, kind: Kind) {
        self.insert(name, Figure { value: Some(value), unit: Cow::Borrowed(unit), better, kind, missing: None });
    }

    /// Add (or replace) a figure that is measured when `value` is `Some`
    /// and missing, for `why`, when it is `None`.
    pub fn set_opt(
        &mut self,
        name: &str,
        value: Option<f64>,
        unit: &'static str,
        better: Better,
        kind: Kind,
        why: &str,
    ) {
        let missing = value.is_none().then(|| why.to_string());
        self.insert(name, Figure { value, unit: Cow::Borrowed(unit), better, kind, missing });
    }

    /// Add (or replace) the figure `spec` declares: measured when `value`
    /// is `Some`, missing for `why` when it is `None`.
    pub fn put(&mut self, spec: &super::FigureSpec, value: Option<f64>, why: &str) {
        let missing = value.is_none().then(|| why.to_string());
        let figure = Figure { value, unit: Cow::Borrowed(spec.unit), better: spec.better, kind: spec.kind, missing };
        self.insert(spec.name, figure);
    }

    /// Add (or replace) a figure that could not be measured, and why.
    pub fn set_missing(&mut self, name: &str, unit: &'static str, better: Better, kind: Kind, why: &str) {
        self.set_opt(name, None, unit, better, kind, why);
    }

    fn insert(&mut self, name: &str, figure: Figure) {
        match self.figures.iter_mut().find(|(n, _)| n == name) {
            Some(slot) => slot.1 = figure,
            None => self.figures.push((name.to_string(), figure)),
        }
    }

    /// The figure called `name`, if any was set.
    pub fn get(&self, name: &str) -> Option<&Figure> {
        self.figures.iter().find(|(n, _)| n == name).map(|(_, f)| f)
    }

    /// The value of `name`; `None` when unset or missing.
    pub fn value(&self, name: &str) -> Option<f64> {
        self.get(name).and_then(|f| f.value)
    }

    /// All figures in insertion order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Figure)> {
        self.figures.iter().map(|(n, f)| (n.as_str(), f))
    }

    /// Add (or replace) a figure as it is (one read back from a store).
    pub fn insert_figure(&mut self, name: &str, figure: Figure) {
        self.insert(name, figure);
    }

    /// Number of figures.
    pub fn len(&self) -> usize {
        self.figures.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.figures.is_empty()
    }

    /// Put right the rates of a run recorded before fslab settled on
    /// binary units (fslab/1 stores before issue 16): a figure in `MB/s`
    /// (10^6 bytes) becomes `MiB/s`, its value scaled, so old and new runs
    /// compare. `total_mbps` alone was always MiB/s under the wrong label:
    /// only its label changes.
    pub fn upgrade_units(&mut self) {
        for (name, figure) in &mut self.figures {
            if figure.unit == "MB/s" {
                if name != "total_mbps" {
                    figure.value = figure.value.map(|v| v * 1e6 / crate::units::MIB);
                }
                figure.unit = Cow::Borrowed("MiB/s");
            }
        }
    }

    /// Move every figure of `other` in, replacing same-named ones.
    pub fn extend(&mut self, other: Figures) {
        for (name, figure) in other.figures {
            self.insert(&name, figure);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_figures_serialize_as_null_with_a_reason() {
        let mut f = Figures::new();
        f.set("wall_s", 1.5, "s", Better::Lower, Kind::Timing);
        f.set_missing("journal_commits", "count", Better::Lower, Kind::Exact, "needs root");
        let json = serde_json::to_value(&f).unwrap();
        assert_eq!(json["wall_s"]["value"], 1.5);
        assert_eq!(json["wall_s"]["better"], "lower");
        assert_eq!(json["wall_s"]["kind"], "timing");
        assert!(json["wall_s"].get("missing").is_none());
        assert!(json["journal_commits"]["value"].is_null());
        assert_eq!(json["journal_commits"]["missing"], "needs root");
        assert_eq!(f.value("journal_commits"), None);
        assert_eq!(f.value("wall_s"), Some(1.5));
    }

    #[test]
    fn old_runs_decimal_rates_read_back_in_mib_per_second() {
        let mut f = Figures::new();
        f.set("cold_read_mbps", 100.0, "MB/s", Better::Higher, Kind::Timing);
        f.set("total_mbps", 584.9, "MB/s", Better::Higher, Kind::Timing);
        f.set_missing("create_mbps", "MB/s", Better::Higher, Kind::Timing, "too fast");
        f.set("written_bytes", 1e6, "bytes", Better::Lower, Kind::Timing);
        f.upgrade_units();
        let cold = f.get("cold_read_mbps").unwrap();
        assert_eq!(cold.unit, "MiB/s");
        assert!((cold.value.unwrap() - 95.367431640625).abs() < 1e-9, "{cold:?}");
        // Always MiB/s under the wrong label: the value stays.
        assert_eq!((f.get("total_mbps").unwrap().unit.as_ref(), f.value("total_mbps")), ("MiB/s", Some(584.9)));
        assert_eq!(f.get("create_mbps").unwrap().unit, "MiB/s");
        assert_eq!(f.value("written_bytes"), Some(1e6));
    }

    #[test]
    fn order_is_insertion_order_and_set_replaces() {
        let mut f = Figures::new();
        f.set("b", 1.0, "count", Better::Lower, Kind::Exact);
        f.set("a", 2.0, "count", Better::Lower, Kind::Exact);
        f.set("b", 3.0, "count", Better::Lower, Kind::Exact);
        let names: Vec<_> = f.iter().map(|(n, _)| n).collect();
        assert_eq!(names, ["b", "a"]);
        assert_eq!(f.value("b"), Some(3.0));
        let json = serde_json::to_string(&f).unwrap();
        assert!(json.find("\"b\"").unwrap() < json.find("\"a\"").unwrap(), "{json}");
    }

    #[test]
    fn the_words_are_the_json_words() {
        for b in [Better::Lower, Better::Higher] {
            assert_eq!(serde_json::to_value(b).unwrap(), b.as_str());
            assert_eq!(Better::from_word(b.as_str()), Some(b));
        }
        for k in [Kind::Exact, Kind::Timing] {
            assert_eq!(serde_json::to_value(k).unwrap(), k.as_str());
            assert_eq!(Kind::from_word(k.as_str()), Some(k));
        }
        assert_eq!(Kind::from_word("fuzzy"), None);
    }

    #[test]
    fn figures_read_back_equal_and_in_order() {
        let mut f = Figures::new();
        f.set("z_s", 0.25, "s", Better::Lower, Kind::Timing);
        f.set("a", 7.0, "count", Better::Higher, Kind::Exact);
        f.set_missing("m", "count", Better::Lower, Kind::Exact, "no tracefs");
        let back: Figures = serde_json::from_str(&serde_json::to_string(&f).unwrap()).unwrap();
        assert_eq!(back, f);
        let names: Vec<_> = back.iter().map(|(n, _)| n).collect();
        assert_eq!(names, ["z_s", "a", "m"]);
    }
}
