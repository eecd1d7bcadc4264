//! Scenario parameters: typed, with a small default, a full-scale default
//! and the seed's own value, and the `--set key=v1,v2` matrix.
//!
//! Every value is checked against its type before anything is made, so a
//! typo never costs a mkfs.

use std::collections::BTreeMap;

use serde::Serialize;

/// What values a parameter takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamKind {
    /// A size in bytes (`512M`, `1GiB`), more than 0.
    Size,
    /// A whole number from 1 to `max`: the work must stay within what
    /// the machine can do (a stream of a day, a million files).
    Count {
        /// The largest value taken.
        max: u64,
    },
    /// One of a fixed list of words.
    Choice(&'static [&'static str]),
    /// One of a fixed list of words, or else a path: absolute, or starting
    /// with `./` or `../`, so a typo of a word is not taken for a path (the
    /// scenario's `check` says whether the path fits).
    ChoiceOrPath(&'static [&'static str]),
}

/// One parameter of a scenario.
#[derive(Debug, Clone, Copy)]
pub struct ParamSpec {
    /// Name used with `--set`.
    pub name: &'static str,
    /// Its type.
    pub kind: ParamKind,
    /// Default at `--scale small`.
    pub small: &'static str,
    /// Default at `--scale full`.
    pub full: &'static str,
    /// The seed's value, as the report gives it.
    pub seed: &'static str,
    /// What it means.
    pub about: &'static str,
}

/// A checked parameter value.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum ParamValue {
    /// A size or count.
    Number(u64),
    /// A choice.
    Word(String),
}

/// The parameters of one case.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(transparent)]
pub struct Params(BTreeMap<String, ParamValue>);

impl Params {
    /// A number parameter; the scenario declared it, so it is there.
    pub fn number(&self, name: &str) -> u64 {
        match self.0.get(name) {
            Some(ParamValue::Number(n)) => *n,
            other => panic!("parameter {name} is not a number: {other:?}"),
        }
    }

    /// A choice parameter.
    pub fn word(&self, name: &str) -> &str {
        match self.0.get(name) {
            Some(ParamValue::Word(w)) => w,
            other => panic!("parameter {name} is not a word: {other:?}"),
        }
    }

    /// The parameters a case recorded, checked again against `specs`: how
    /// work is built again from a record in another process. Every
    /// declared parameter must be there, and nothing else.
    pub fn from_json(specs: &[ParamSpec], map: &serde_json::Map<String, serde_json::Value>) -> Result<Params, String> {
        if let Some(unknown) = map.keys().find(|k| !specs.iter().any(|s| s.name == k.as_str())) {
            return Err(format!("no parameter `{unknown}`"));
        }
        let mut params = BTreeMap::new();
        for spec in specs {
            let text = match map.get(spec.name) {
                Some(serde_json::Value::Number(n)) => n.to_string(),
                Some(serde_json::Value::String(s)) => s.clone(),
                Some(other) => return Err(format!("parameter `{}` is {other}, not a number or a word", spec.name)),
                None => return Err(format!("parameter `{}` is missing", spec.name)),
            };
            params.insert(spec.name.to_string(), parse_value(spec, &text)?);
        }
        Ok(Params(params))
    }

    /// As a JSON object, for the case record.
    pub fn to_json(&self) -> serde_json::Map<String, serde_json::Value> {
        match serde_json::to_value(self) {
            Ok(serde_json::Value::Object(map)) => map,
            _ => serde_json::Map::new(),
        }
    }
}

/// Which defaults to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Scale {
    /// Sizes that let the whole seed preset finish in minutes.
    Small,
    /// The seeds' own sizes.
    Full,
}

/// Check one value against its spec.
pub fn parse_value(spec: &ParamSpec, text: &str) -> Result<ParamValue, String> {
    let bad = |why: String| format!("--set {}={text}: {why}", spec.name);
    match spec.kind {
        ParamKind::Size => match crate::units::parse_bytes(text) {
            Ok(0) => Err(bad("must be more than 0".into())),
            Ok(n) => Ok(ParamValue::Number(n)),
            Err(e) => Err(bad(e)),
        },
        ParamKind::Count { max } => match whole_number(text.trim()) {
            Some(n) if (1..=i128::from(max)).contains(&n) => Ok(ParamValue::Number(n as u64)),
            Some(n) if n < 1 => Err(bad(format!("must be more than 0: give a whole number from 1 to {max}"))),
            Some(_) => Err(bad(format!("out of range: give a whole number from 1 to {max}"))),
            None => Err(bad(format!("not a whole number: give one from 1 to {max}"))),
        },
        ParamKind::Choice(words) => match words.iter().find(|w| **w == text.trim()) {
            Some(w) => Ok(ParamValue::Word(w.to_string())),
            None => Err(bad(format!("choose one of {}", words.join(", ")))),
        },
        ParamKind::ChoiceOrPath(words) => match words.iter().find(|w| **w == text.trim()) {
            Some(w) => Ok(ParamValue::Word(w.to_string())),
            None if ["/", "./", "../"].iter().any(|p| text.starts_with(p)) => Ok(ParamValue::Word(text.to_string())),
            None => Err(bad(format!("choose one of {}, or give a path (/..., ./..., ../...)", words.join(", ")))),
        },
    }
}

/// A whole number as written, in digits or in exponent form (`1e9`),
/// widened so that a value too large for any count still reads as a
/// number, and so as out of range rather than malformed.
fn whole_number(text: &str) -> Option<i128> {
    if let Ok(n) = text.parse::<i128>() {
        return Some(n);
    }
    let value: f64 = text.parse().ok()?;
    // `as` saturates, and every value past i128 is out of range anyway.
    (value.is_finite() && value.fract() == 0.0).then_some(value as i128)
}

/// One `--set key=v1,v2,...`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Setting {
    /// Parameter name.
    pub key: String,
    /// One or more values (more than one makes a matrix).
    pub values: Vec<String>,
}

impl std::str::FromStr for Setting {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let (key, values) =
            text.split_once('=').ok_or_else(|| format!("`{text}` is not KEY=VALUE[,VALUE...] (for example size=1G)"))?;
        let values: Vec<String> = values.split(',').map(|v| v.trim().to_string()).collect();
        if values.iter().any(|v| v.is_empty()) {
            return Err(format!("`{text}`: an empty value"));
        }
        Ok(Setting { key: key.trim().to_string(), values })
    }
}

/// Every combination of values for `specs`: the scale's defaults, with
/// each `--set` that names one of `specs` varied. Settings for other
/// scenarios' parameters are ignored here (the caller checks that every
/// setting belongs to some scenario).
pub fn expand(specs: &[ParamSpec], settings: &[Setting], scale: Scale) -> Result<Vec<Params>, String> {
    let mut cases = vec![Params::default()];
    for spec in specs {
        let texts: Vec<&str> = match settings.iter().rev().find(|s| s.key == spec.name) {
            Some(s) => s.values.iter().map(String::as_str).collect(),
            None => vec![if scale == Scale::Full { spec.full } else { spec.small }],
        };
        let values = texts.iter().map(|t| parse_value(spec, t)).collect::<Result<Vec<_>, _>>()?;
        cases = cases
            .into_iter()
            .flat_map(|case| {
                values.iter().map(move |v| {
                    let mut c = case.clone();
                    c.0.insert(spec.name.to_string(), v.clone());
                    c
                })
            })
            .collect();
    }
    Ok(cases)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPECS: [ParamSpec; 2] = [
        ParamSpec { name: "size", kind: ParamKind::Size, small: "64M", full: "1G", seed: "1 GiB", about: "" },
        ParamSpec {
            name: "order",
            kind: ParamKind::Choice(&["seed", "sequential"]),
            small: "seed",
            full: "seed",
            seed: "seed",
            about: "",
        },
    ];

    #[test]
    fn params_read_back_from_a_record_as_they_were() {
        let sets = ["size=3M".parse().unwrap(), "order=sequential".parse().unwrap()];
        let params = expand(&SPECS, &sets, Scale::Small).unwrap().remove(0);
        assert_eq!(Params::from_json(&SPECS, &params.to_json()).unwrap(), params);
        let mut extra = params.to_json();
        extra.insert("colour".into(), "blue".into());
        assert_eq!(Params::from_json(&SPECS, &extra).unwrap_err(), "no parameter `colour`");
        let mut short = params.to_json();
        short.remove("order");
        assert_eq!(Params::from_json(&SPECS, &short).unwrap_err(), "parameter `order` is missing");
        let mut bad = params.to_json();
        bad.insert("order".into(), "random".into());
        assert!(Params::from_json(&SPECS, &bad).unwrap_err().contains("choose one of seed, sequential"));
    }

    #[test]
    fn defaults_follow_the_scale_and_sets_make_a_matrix() {
        let small = expand(&SPECS, &[], Scale::Small).unwrap();
        assert_eq!(small.len(), 1);
        assert_eq!(small[0].number("size"), 64 << 20);
        let full = expand(&SPECS, &[], Scale::Full).unwrap();
        assert_eq!(full[0].number("size"), 1 << 30);
        let sets = ["size=1M,2M".parse().unwrap(), "order=seed,sequential".parse().unwrap()];
        let m = expand(&SPECS, &sets, Scale::Small).unwrap();
        assert_eq!(m.len(), 4);
        assert_eq!(m[3].number("size"), 2 << 20);
        assert_eq!(m[3].word("order"), "sequential");
    }

    #[test]
    fn bad_values_say_what_is_allowed() {
        let e = expand(&SPECS, &["size=0".parse().unwrap()], Scale::Small).unwrap_err();
        assert!(e.contains("more than 0"), "{e}");
        let e = expand(&SPECS, &["size=lots".parse().unwrap()], Scale::Small).unwrap_err();
        assert!(e.contains("size=lots"), "{e}");
        let e = expand(&SPECS, &["order=random".parse().unwrap()], Scale::Small).unwrap_err();
        assert!(e.contains("seed, sequential"), "{e}");
        assert!("size".parse::<Setting>().is_err());
        let source = ParamSpec { kind: ParamKind::ChoiceOrPath(&["synthetic"]), ..SPECS[1] };
        assert_eq!(parse_value(&source, "synthetic"), Ok(ParamValue::Word("synthetic".into())));
        assert_eq!(parse_value(&source, "./src"), Ok(ParamValue::Word("./src".into())));
        assert_eq!(parse_value(&source, "/usr/src"), Ok(ParamValue::Word("/usr/src".into())));
        let e = parse_value(&source, "synthetc").unwrap_err();
        assert!(e.contains("or give a path"), "{e}");
        assert!("size=1M,".parse::<Setting>().is_err());
    }

    #[test]
    fn counts_out_of_range_say_the_range() {
        let seconds = ParamSpec { name: "seconds", kind: ParamKind::Count { max: 86_400 }, ..SPECS[0] };
        assert_eq!(parse_value(&seconds, "60"), Ok(ParamValue::Number(60)));
        assert_eq!(parse_value(&seconds, "1e3"), Ok(ParamValue::Number(1000)));
        for text in ["1e9", "86401", "99999999999999999999999999999999999999999"] {
            let e = parse_value(&seconds, text).unwrap_err();
            assert!(e.contains("out of range") && e.contains("from 1 to 86400"), "{text}: {e}");
        }
        for text in ["0", "-3"] {
            let e = parse_value(&seconds, text).unwrap_err();
            assert!(e.contains("more than 0") && e.contains("from 1 to 86400"), "{text}: {e}");
        }
        for text in ["1.5", "ten", "inf", "NaN"] {
            let e = parse_value(&seconds, text).unwrap_err();
            assert!(e.contains("not a whole number") && e.contains("from 1 to 86400"), "{text}: {e}");
        }
    }
}
