//! What a table cannot say in its cells: each failed case with its error,
//! and the figures shown as `-`, once per table, grouped by reason.

use super::super::verdicts::wrap;
use crate::record::{Case, Status};

/// Each failed case with its error and the last lines its command wrote
/// to stderr.
pub fn failures(cases: &[&Case]) -> String {
    let mut s = String::new();
    for case in cases.iter().filter(|c| c.status == Status::Failed) {
        s.push('\n');
        // An error of several lines (a guest's console) is indented under
        // its place, so no line of it reads as a line of the table's.
        let error = case.error.as_deref().unwrap_or("failed").replace('\n', "\n    ");
        s.push_str(&wrap(&format!("{}: {error}", case.place()), 2));
        if let Some(command) = &case.command {
            let tail: Vec<&str> = command.stderr.lines().rev().take(10).collect();
            for line in tail.iter().rev() {
                s.push_str(&wrap(&format!("  | {line}"), 4));
            }
        }
    }
    s
}

/// Figures missed for one reason, and the places that missed them.
type MissingSet<'a> = (Vec<&'a str>, Vec<String>);

/// The figures of `shown` that successful cases could not measure: a line
/// per reason, naming the figures and every place it holds for
/// (`not measured: journal_commits on ext2, btrfs (...)`; places missing
/// different figures for one reason split by `;`), wrapped to the table's
/// width.
pub fn missing(cases: &[&Case], shown: &[String]) -> String {
    // Per place and reason, the figures, in the table's order.
    let mut by_place: Vec<(String, String, Vec<&str>)> = Vec::new();
    for case in cases.iter().filter(|c| c.status == Status::Ok) {
        let place = case.place();
        for name in shown {
            let Some(figure) = case.figures.get(name).filter(|f| f.value.is_none()) else { continue };
            let why = figure.missing.clone().unwrap_or_else(|| "no reason given".into());
            match by_place.iter_mut().find(|(p, w, _)| *p == place && *w == why) {
                Some((_, _, names)) if !names.contains(&name.as_str()) => names.push(name),
                Some(_) => {}
                None => by_place.push((place.clone(), why, vec![name.as_str()])),
            }
        }
    }
    // A line per reason; in it, the places that miss the same figures
    // for it together.
    let mut groups: Vec<(String, Vec<MissingSet>)> = Vec::new();
    for (place, why, names) in by_place {
        let index = groups.iter().position(|(w, _)| *w == why).unwrap_or_else(|| {
            groups.push((why, Vec::new()));
            groups.len() - 1
        });
        let sets = &mut groups[index].1;
        match sets.iter_mut().find(|(n, _)| *n == names) {
            Some((_, places)) => places.push(place),
            None => sets.push((names, vec![place])),
        }
    }
    let mut s = String::new();
    for (why, sets) in groups {
        let said: Vec<String> = sets.iter().map(|(names, places)| format!("{} on {}", names.join(", "), places.join(", "))).collect();
        s.push_str(&wrap(&format!("not measured: {} ({why})", said.join("; ")), 2));
    }
    s
}
