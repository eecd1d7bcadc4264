//! What `fslab hunt` says: a line per measured step, the last line (where
//! the claim flips, or why there is no bracket), and the `--json`
//! document.

use serde::Serialize;

use crate::plan::hunt_axis::Vary;
use crate::harness::hunt::{Again, Flip, Hunt, Outcome};
use crate::record::{PlaceVerdict, Status};
use crate::units::short_number;

/// One measured point, as `--json` gives it.
#[derive(Debug, Clone, Serialize)]
pub struct Step {
    /// The value (bytes for sizes).
    pub value: u64,
    /// The value as the case records it (`256M`).
    pub shown: String,
    /// The place as tables name it (`xfs@256M`).
    pub place: String,
    /// The claim there (`None`: not judged, or a case failed).
    pub shows: Option<bool>,
    /// Whether its first repeats disagreed.
    pub mixed: bool,
    /// Why it was measured a second time (`mixed`, `busy`, `flip`,
    /// `figure`), if it was.
    pub again: Option<&'static str>,
    /// Whether a case of its first repeats ran busy.
    pub ran_busy: bool,
    /// Whether its claim rests on busy repeats alone.
    pub busy: bool,
    /// The deciding figure's name.
    pub figure: String,
    /// Its value on the repeats that decide.
    pub value_of_figure: Option<f64>,
    /// The figures in a few words, or the failed case's error.
    pub evidence: String,
    /// Each repeat.
    pub cases: Vec<StepCase>,
}

/// One repeat of a point.
#[derive(Debug, Clone, Serialize)]
pub struct StepCase {
    /// Its number at this point, from 1.
    pub repeat: u32,
    /// `failed` when a case of it failed.
    pub status: Status,
    /// That case's error.
    pub error: Option<String>,
    /// The busy note of a case of it that ran busy.
    pub busy: Option<String>,
    /// The claim on this repeat alone.
    pub shows: Option<bool>,
    /// The deciding figure on this repeat alone.
    pub value_of_figure: Option<f64>,
}

/// What a hunt was: the fields of its document before the steps.
pub struct Head<'a> {
    /// The scenario.
    pub scenario: &'a str,
    /// Its seed.
    pub seed: &'a str,
    /// The target's label.
    pub fs: String,
    /// The stored run's id.
    pub run: String,
    /// The parameters held (a key of the seed's comparison as a list).
    pub params: serde_json::Map<String, serde_json::Value>,
    /// Repeats per point.
    pub repeat: u32,
    /// `--steps`.
    pub steps_budget: u32,
}

/// The `hunt` object of `--json`.
#[derive(Debug, Serialize)]
pub struct HuntJson<'a> {
    scenario: &'a str,
    seed: &'a str,
    fs: String,
    run: String,
    vary: serde_json::Value,
    params: serde_json::Map<String, serde_json::Value>,
    repeat: u32,
    steps_budget: u32,
    steps: Vec<Step>,
    outcome: &'static str,
    bracket: Option<serde_json::Value>,
    failed: Option<serde_json::Value>,
    not_monotonic: Option<Vec<serde_json::Value>>,
    figure_against: Vec<[u64; 2]>,
    summary: String,
}

impl<'a> HuntJson<'a> {
    /// The document of a hunt that ended as `found` says.
    pub fn new(head: Head<'a>, vary: &Vary, found: &Hunt, steps: Vec<Step>, summary: String) -> HuntJson<'a> {
        let bracket = |shows_at: u64, gone_at: u64, narrow: bool| {
            serde_json::json!({
                "shows_at": shows_at, "gone_at": gone_at,
                "shows_at_shown": vary.shown(shows_at), "gone_at_shown": vary.shown(gone_at), "narrow": narrow
            })
        };
        let so_far = |flip: &Option<Flip>| {
            flip.map(|f| bracket(f.shows_at, f.gone_at, vary.axis.narrow(f.shows_at.min(f.gone_at), f.shows_at.max(f.gone_at))))
        };
        let (outcome, bracket) = match &found.outcome {
            Outcome::Bracket { shows_at, gone_at, narrow } => ("bracket", Some(bracket(*shows_at, *gone_at, *narrow))),
            Outcome::Agree(_) => ("agree", None),
            Outcome::Unjudged(_) => ("unjudged", None),
            Outcome::Failed { so_far: flip, .. } => ("failed", so_far(flip)),
            Outcome::NotMonotonic(_) => ("not_monotonic", None),
            Outcome::Interrupted(flip) => ("interrupted", so_far(flip)),
        };
        let failed = match &found.outcome {
            Outcome::Failed { value, error, .. } => Some(serde_json::json!({"value": value, "shown": vary.shown(*value), "error": error})),
            _ => None,
        };
        let not_monotonic = match &found.outcome {
            Outcome::NotMonotonic(values) => Some(
                values
                    .iter()
                    .filter_map(|v| steps.iter().find(|s| s.value == *v))
                    .map(|s| serde_json::json!({"value": s.value, "shown": s.shown, "shows": s.shows, "value_of_figure": s.value_of_figure}))
                    .collect(),
            ),
            _ => None,
        };
        HuntJson {
            scenario: head.scenario,
            seed: head.seed,
            fs: head.fs,
            run: head.run,
            vary: serde_json::json!({
                "key": vary.name, "lo": vary.axis.lo, "hi": vary.axis.hi,
                "scale": if vary.axis.scale == crate::harness::hunt::Scale::Geometric { "geometric" } else { "linear" },
                "grain": vary.axis.grain, "tolerance": vary.axis.tolerance()
            }),
            params: head.params,
            repeat: head.repeat,
            steps_budget: head.steps_budget,
            steps,
            outcome,
            bracket,
            failed,
            not_monotonic,
            figure_against: found.against.iter().map(|&(a, b)| [a, b]).collect(),
            summary,
        }
    }
}

/// `1 repeat`, `2 repeats`.
pub fn plural(n: u32, word: &str) -> String {
    if n == 1 { format!("1 {word}") } else { format!("{n} {word}s") }
}

/// A step as it is measured: "step 3: memory 215 MiB (xfs@215M): extents
/// 65,536 → shows (...)", "step 3 again (it ran busy): ...; quiet this
/// time", or "step 3: ...: failed: ERROR". `busy` is the note of a case
/// of this round that ran busy.
pub fn step_line(number: usize, again: Option<Again>, vary: &Vary, step: &Step, place: &PlaceVerdict, busy: Option<&str>, failed: Option<&str>) -> String {
    let head = match again {
        None => format!("step {number}"),
        Some(why) => format!("step {number} again ({})", why.said()),
    };
    let at = format!("{head}: {} {} ({})", vary.name, vary.said(step.value), step.place);
    let mut line = match failed {
        Some(error) => format!("{at}: failed: {}", crate::text::escape(error)),
        None => {
            let figure = step.value_of_figure.map_or("-".to_string(), short_number);
            format!("{at}: {} {figure} → {} ({})", place.figure, place.word(), place.evidence)
        }
    };
    match (busy, again) {
        (Some(note), Some(Again::Busy)) => line += &format!("; busy again: {note}"),
        (Some(note), _) => line += &format!("; ran busy: {note}"),
        (None, Some(Again::Busy)) => line += "; quiet this time",
        (None, _) => {}
    }
    line
}

/// "a, b and c".
fn listed(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// "shows at memory ≤ 245 MiB, gone at ≥ 261 MiB".
fn sides(vary: &Vary, shows_at: u64, gone_at: u64) -> String {
    let key = &vary.name;
    if shows_at < gone_at {
        format!("shows at {key} ≤ {}, gone at ≥ {}", vary.said(shows_at), vary.said(gone_at))
    } else {
        format!("gone at {key} ≤ {}, shows at ≥ {}", vary.said(gone_at), vary.said(shows_at))
    }
}

/// The last line: where the claim flips, or why there is no bracket; how
/// many steps and repeats, which points were measured again and why, and
/// what is left less reliable. `signal` names an interruption's.
pub fn summary(head: &str, vary: &Vary, found: &Hunt, repeat: u32, steps: &[Step], signal: Option<&str>) -> String {
    let figure_name = steps.iter().map(|s| s.figure.as_str()).find(|f| !f.is_empty()).unwrap_or("the figure");
    // "245 MiB (2,236)", or with the figure's name: "245 MiB (extents 2,236)".
    let at = |value: u64, named: bool| {
        let figure = steps.iter().find(|s| s.value == value).and_then(|s| s.value_of_figure).map_or("-".to_string(), short_number);
        format!("{} ({}{figure})", vary.said(value), if named { format!("{figure_name} ") } else { String::new() })
    };
    let mut counted = format!("{}, {} each", plural(steps.len() as u32, "step"), plural(repeat, "repeat"));
    for why in [Again::Mixed, Again::Busy, Again::Flip, Again::Figure] {
        let again: Vec<String> = steps.iter().filter(|s| s.again == Some(why.as_str())).map(|s| vary.said(s.value)).collect();
        if again.is_empty() {
            continue;
        }
        let reason = match why {
            Again::Mixed => "where they disagreed".to_string(),
            Again::Busy => "which ran busy".to_string(),
            Again::Flip => "against a single flip".to_string(),
            Again::Figure => format!("where {figure_name} ran against the flip"),
        };
        counted += &format!(", {} at {} {reason}", 2 * repeat, listed(&again));
    }
    let mut notes = String::new();
    let busy: Vec<String> = steps.iter().filter(|s| s.busy).map(|s| vary.said(s.value)).collect();
    if !busy.is_empty() {
        notes += &format!("; {} measured only while busy: less reliable", listed(&busy));
    }
    for (low, high) in &found.against {
        notes += &format!("; {figure_name} run against the flip from {} to {}, each measured twice", at(*low, false), at(*high, false));
    }
    let key = &vary.name;
    let so_far = |flip: &Option<Flip>, not: &str| match flip {
        Some(f) => format!("so far {}, {not}", sides(vary, f.shows_at, f.gone_at)),
        None => "no bracket".to_string(),
    };
    match &found.outcome {
        Outcome::Bracket { shows_at, gone_at, narrow } => {
            let budget = if *narrow { String::new() } else { format!("; the step budget ran out before the bracket was {}", vary.axis.tolerance()) };
            format!("{head}: {} ({counted}){budget}{notes}", sides(vary, *shows_at, *gone_at))
        }
        Outcome::Agree(shows) => format!(
            "{head}: {} at both ends, {key} {} and {}: no bracket, nothing to bisect ({counted}){notes}",
            if *shows { "shows" } else { "gone" },
            vary.said(vary.axis.lo),
            vary.said(vary.axis.hi)
        ),
        Outcome::Unjudged(value) => format!("{head}: the claim could not be judged at {key} {}: no bracket ({counted}){notes}", vary.said(*value)),
        Outcome::Failed { value, so_far: flip, .. } => format!(
            "{head}: a case failed at {key} {}, so the hunt stopped there: {} ({counted}){notes}",
            vary.said(*value),
            so_far(flip, "not narrowed further")
        ),
        Outcome::NotMonotonic(values) => {
            let judged = |shows: bool| -> Vec<String> {
                values.iter().filter(|v| steps.iter().any(|s| s.value == **v && s.shows == Some(shows))).map(|v| at(*v, true)).collect()
            };
            format!(
                "{head}: the claim does not flip once along {key}: shows at {} but gone at {}, each measured twice: no bracket ({counted}){notes}",
                judged(true).join(" and "),
                judged(false).join(" and ")
            )
        }
        Outcome::Interrupted(flip) => format!(
            "{head}: interrupted by {}: {} ({counted}){notes}",
            signal.unwrap_or("a signal"),
            so_far(flip, &format!("not narrowed to {}", vary.axis.tolerance()))
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::hunt::Point;

    const MIB: u64 = 1 << 20;

    fn vary() -> Vary {
        crate::plan::hunt_axis::parse("memory=128M..1G", crate::scenario::find("mmap-fill").unwrap()).unwrap()
    }

    fn step(mib: u64, shows: bool, extents: f64, again: Option<Again>) -> Step {
        Step {
            value: mib * MIB,
            shown: format!("{mib}M"),
            place: format!("xfs@{mib}M"),
            shows: Some(shows),
            mixed: false,
            again: again.map(Again::as_str),
            ran_busy: again == Some(Again::Busy),
            busy: false,
            figure: "extents".into(),
            value_of_figure: Some(extents),
            evidence: String::new(),
            cases: Vec::new(),
        }
    }

    fn found(outcome: Outcome) -> Hunt {
        let point = Point { value: 0, shows: None, figure: None, mixed: false, ran_busy: false, busy: false, again: None };
        Hunt { points: vec![point], outcome, against: Vec::new() }
    }

    #[test]
    fn points_that_do_not_flip_once_are_named_with_their_figures() {
        let flip = Some(Again::Flip);
        let steps = [step(1024, true, 65536.0, flip), step(512, false, 1.0, flip), step(256, true, 65536.0, flip)];
        let hunt = found(Outcome::NotMonotonic(vec![256 * MIB, 512 * MIB, 1024 * MIB]));
        let said = summary("mmap-fill on xfs", &vary(), &hunt, 1, &steps, None);
        assert_eq!(
            said,
            "mmap-fill on xfs: the claim does not flip once along memory: shows at 256 MiB (extents 65,536) and 1 GiB \
             (extents 65,536) but gone at 512 MiB (extents 1), each measured twice: no bracket (3 steps, 1 repeat each, \
             2 at 1 GiB, 512 MiB and 256 MiB against a single flip)"
        );
    }

    #[test]
    fn a_failure_an_interruption_and_busy_points_are_said_as_such() {
        let mut steps = vec![step(1024, false, 1.0, Some(Again::Busy)), step(362, false, 1.0, None), step(215, true, 65536.0, None)];
        steps[0].busy = true;
        let so_far = Some(Flip { shows_at: 215 * MIB, gone_at: 362 * MIB });
        let failed = found(Outcome::Failed { value: 279 * MIB, error: "No space left on device".into(), so_far });
        let said = summary("h", &vary(), &failed, 1, &steps, None);
        assert_eq!(
            said,
            "h: a case failed at memory 279 MiB, so the hunt stopped there: so far shows at memory ≤ 215 MiB, gone at ≥ 362 MiB, \
             not narrowed further (3 steps, 1 repeat each, 2 at 1 GiB which ran busy); 1 GiB measured only while busy: less reliable"
        );
        let said = summary("h", &vary(), &found(Outcome::Interrupted(so_far)), 1, &steps, Some("SIGTERM"));
        assert!(said.starts_with("h: interrupted by SIGTERM: so far shows at memory ≤ 215 MiB, gone at ≥ 362 MiB, not narrowed to within 1/8"), "{said}");
        assert!(!said.contains("budget"), "{said}");
        let mut against = found(Outcome::Bracket { shows_at: 215 * MIB, gone_at: 362 * MIB, narrow: false });
        against.against = vec![(215 * MIB, 362 * MIB)];
        let said = summary("h", &vary(), &against, 1, &steps, None);
        assert!(said.ends_with("; extents run against the flip from 215 MiB (65,536) to 362 MiB (1), each measured twice"), "{said}");
    }
}
