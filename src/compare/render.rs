//! A [`Comparison`] for people and programs: plain text for a terminal,
//! a GitHub markdown table for a pull request, `fslab/1` JSON, and an HTML
//! table for the report page. Each returns the text; the caller prints or
//! writes it.
//!
//! Every renderer reads the same [`Cells`], so a row says the same thing
//! wherever it is shown.

mod words;

pub use words::wrap;

use std::fmt::Write as _;

use super::{Comparison, FigureComparison, Outcome, format, stats};

/// One row in words: what, how much, on what evidence.
struct Cells {
    /// `tree-copy read_mbps on ext4 (size=64M)`.
    label: String,
    /// `8.8x slower`, `18.1x more`, `changed +4.76%`, `unchanged`.
    headline: String,
    /// `median 410 → 46.6 MB/s`, or `21 → 2` for stable values.
    values: String,
    /// `8.1x–9.4x` in the headline's direction; empty without one.
    ci: String,
    /// `0.008`; empty without a test.
    p: String,
    note: String,
}

fn cells(row: &FigureComparison) -> Cells {
    let stable = |v: &[f64]| v.iter().all(|&x| x == v[0]);
    let change = format::change(row.base_median, row.new_median, &row.unit);
    // The interval reads in the headline's direction: turned round when
    // the figure got better, as the headline's factor is.
    let better = row.slowdown.is_some_and(|s| s < 1.0);
    let ci = row.ci.map(|[lo, hi]| if better { [1.0 / hi, 1.0 / lo] } else { [lo, hi] });
    // Too few repeats for a test, or not judged: a p would only mislead
    // (the header says what the sizes allow; JSON keeps it).
    let untestable = matches!(
        row.outcome,
        Outcome::TooFewRepeats
            | Outcome::Undecided
            | Outcome::LikelyRegression
            | Outcome::LikelyImprovement
            | Outcome::HostWide
            | Outcome::Emulated
    );
    // An emulated row's reason is its outcome's words and said once for
    // the comparison; JSON keeps it on the row.
    let note = if row.outcome == Outcome::Emulated { String::new() } else { row.note.clone() };
    let needed = words::repeats_needed(row);
    Cells {
        label: format!("{}{}", row.label(), marks(row)),
        headline: headline(row),
        values: if stable(&row.base) && stable(&row.new) { change } else { format!("median {change}") },
        ci: ci.map(|[lo, hi]| format!("{}–{}", format::factor(lo), format::factor(hi))).unwrap_or_default(),
        p: match (row.p_value, row.q_value) {
            _ if untestable => String::new(),
            (Some(p), Some(q)) => format!("{}, q={}", format::p_value(p), format::p_value(q)),
            (Some(p), None) => format::p_value(p),
            _ => String::new(),
        },
        note: [note, needed].into_iter().filter(|s| !s.is_empty()).collect::<Vec<_>>().join("; "),
    }
}

/// ` (host-wide)` for a figure that counts the whole host disk, ` (not
/// gated)` for one outside the gate whose outcome would otherwise fail the
/// comparison or leave it undecided.
fn marks(row: &FigureComparison) -> String {
    let mut marks = String::new();
    if row.host_wide {
        marks.push_str(" (host-wide)");
    }
    let would_gate = row.outcome == Outcome::Regression || super::gate::is_undecided(row.outcome);
    if !row.gated && would_gate {
        marks.push_str(" (not gated)");
    }
    marks
}

fn headline(row: &FigureComparison) -> String {
    match row.outcome {
        Outcome::Regression
        | Outcome::Improvement
        | Outcome::LikelyRegression
        | Outcome::LikelyImprovement
        | Outcome::Undecided
        | Outcome::Deferred => moved(row),
        Outcome::HostWide | Outcome::Emulated if row.new_median != row.base_median && row.slowdown.is_some() => moved(row),
        Outcome::Changed if row.base_median != 0.0 => {
            let relative = (row.new_median - row.base_median) / row.base_median.abs();
            format!("changed {}", format::signed_percent(relative))
        }
        Outcome::HostWide | Outcome::Emulated => "unchanged".to_string(),
        other => other.words().to_string(),
    }
}

/// How far the median moved, in the unit's words: `8.8x slower`,
/// `18.1x more`, `6.8x larger`, `more (from 0)`.
fn moved(row: &FigureComparison) -> String {
    let (up_word, down_word) = format::direction_words(&row.unit);
    if row.new_median == row.base_median {
        // Only a safety count regresses with its median still: some
        // repeat's value rose from 0 (`more in 1 of 3 repeats`).
        let worse = row.new.iter().filter(|&&v| v > row.base_median).count();
        return format!("{up_word} in {worse} of {} repeats", row.new.len());
    }
    let up = row.new_median > row.base_median;
    let word = if up { up_word } else { down_word };
    let ratio = stats::ratio(row.new_median, row.base_median);
    let factor = if up { ratio } else { 1.0 / ratio };
    if factor.is_finite() {
        format!("{} {word}", format::factor(factor))
    } else {
        let end = if row.base_median == 0.0 { "from 0" } else { "to 0" };
        format!("{word} ({end})")
    }
}

/// `2 regressions, 1 improvement, 140 unchanged`, with the changed and
/// too-few-repeats counts when there are any.
pub fn verdict(c: &Comparison) -> String {
    let plural = |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let mut regressions = plural(c.regressions(), "regression", "regressions");
    if !c.newly_failed.is_empty() {
        let failed = plural(c.newly_failed.len(), "newly failed case", "newly failed cases");
        regressions = format!("{regressions} ({failed})");
    }
    let mut parts = vec![regressions, plural(c.improvements(), "improvement", "improvements")];
    for (outcome, one, many) in [
        (Outcome::LikelyRegression, "likely regression", "likely regressions"),
        (Outcome::Undecided, "undecided", "undecided"),
        (Outcome::LikelyImprovement, "likely improvement", "likely improvements"),
        (Outcome::Deferred, "better only in the window", "better only in the window"),
    ] {
        let n = c.count(outcome);
        if n > 0 {
            parts.push(plural(n, one, many));
        }
    }
    let within = format!("changed within {}", format::percent(c.threshold));
    for (outcome, words) in [(Outcome::Changed, within.as_str()), (Outcome::Unchanged, "unchanged")] {
        let n = c.count(outcome);
        if n > 0 || outcome == Outcome::Unchanged {
            parts.push(format!("{n} {words}"));
        }
    }
    let few = c.count(Outcome::TooFewRepeats);
    if few > 0 {
        parts.push(format!("{few} too few repeats"));
    }
    let host = c.count(Outcome::HostWide);
    if host > 0 {
        parts.push(format!("{host} host-wide"));
    }
    let emulated = c.count(Outcome::Emulated);
    if emulated > 0 {
        parts.push(format!("{emulated} emulated, not judged"));
    }
    parts.join(", ")
}

/// The sections rows are shown in, with their headings.
fn sections(c: &Comparison, all: bool) -> Vec<(String, Vec<&FigureComparison>)> {
    let mut shown = vec![
        (Outcome::Regression, "Regressions".to_string()),
        (Outcome::Improvement, "Improvements".to_string()),
        (Outcome::LikelyRegression, "Likely regressions (too few repeats to decide, ranges apart)".to_string()),
        (Outcome::Undecided, "Undecided (too few repeats to decide, past the threshold for the worse)".to_string()),
        (Outcome::LikelyImprovement, "Likely improvements (too few repeats to decide, ranges apart)".to_string()),
        (Outcome::Deferred, "Better only in the window (with what it left for later, to the unmount, not better)".to_string()),
        (Outcome::Changed, format!("Changed within {}", format::percent(c.threshold))),
    ];
    if all {
        shown.push((Outcome::Unchanged, "Unchanged".to_string()));
        shown.push((Outcome::TooFewRepeats, "Too few repeats to judge".to_string()));
        let host = "Host-wide, not judged (the whole disk under the target, or the machine; --host-figures judges them)";
        shown.push((Outcome::HostWide, host.to_string()));
        let emulated = "Emulated (TCG), not judged (timings of cases run in a guest under software emulation)";
        shown.push((Outcome::Emulated, emulated.to_string()));
    }
    shown
        .into_iter()
        .map(|(outcome, heading)| (heading, c.rows.iter().filter(|r| r.outcome == outcome).collect::<Vec<_>>()))
        .filter(|(_, rows)| !rows.is_empty())
        .collect()
}

/// The rows left out by default, counted: `Not shown: 140 unchanged, ...`.
fn not_shown(c: &Comparison) -> Option<String> {
    let parts = not_shown_parts(c);
    (!parts.is_empty()).then(|| format!("Not shown (--all shows them): {}.", parts.join("; ")))
}

/// What [`not_shown`] counts: `140 unchanged`, `3 with too few repeats
/// to judge`, the host-wide figures.
fn not_shown_parts(c: &Comparison) -> Vec<String> {
    let unchanged = c.count(Outcome::Unchanged);
    let few = c.count(Outcome::TooFewRepeats);
    let mut parts = Vec::new();
    if unchanged > 0 {
        parts.push(format!("{unchanged} unchanged"));
    }
    if few > 0 {
        parts.push(format!("{few} with too few repeats to judge"));
    }
    parts.extend(words::host_wide(c));
    let emulated = c.count(Outcome::Emulated);
    if emulated > 0 {
        parts.push(format!("{emulated} {}", crate::record::guest::EMULATED_NOT_JUDGED));
    }
    parts
}

/// A side's runs: `v1: 20261121T093015Z-4242-9f03a1c2` (the first three).
fn runs_line(label: &str, runs: &[String]) -> String {
    let mut ids = runs.iter().take(3).cloned().collect::<Vec<_>>().join(", ");
    if runs.len() > 3 {
        let _ = write!(ids, " and {} more", runs.len() - 3);
    }
    let count = if runs.len() == 1 { "1 run".to_string() } else { format!("{} runs", runs.len()) };
    format!("{label} ({count}: {ids})")
}

/// A sentence per run that did not finish: what it means for the
/// comparison.
fn incomplete(c: &Comparison) -> Vec<String> {
    [(&c.base_label, &c.base_incomplete, &c.base_plans), (&c.new_label, &c.new_incomplete, &c.new_plans)]
        .into_iter()
        .flat_map(|(label, ids, plans)| {
            ids.iter().map(move |id| match plans.iter().find(|p| p.id == *id) {
                Some(p) => format!(
                    "plan {id} of {label}: {} of {} cases stored (its shards not all run, or killed): only those are compared",
                    p.stored, p.cases
                ),
                None => format!("run {id} of {label} is incomplete (killed or interrupted): only the cases it stored are compared"),
            })
        })
        .collect()
}

/// `Newly failed (ok in v1, failed in v2)`.
fn newly_failed_heading(c: &Comparison) -> String {
    format!("Newly failed (ok in {}, failed in {}), each a regression", c.base_label, c.new_label)
}

fn settings(c: &Comparison) -> String {
    format!("threshold {}, alpha {}, {} bootstrap resamples", format::percent(c.threshold), c.alpha, c.resamples)
}

/// One-sided items, all of them or the first ten.
fn listed(items: &[String], all: bool) -> (Vec<&String>, usize) {
    let keep = if all { items.len() } else { items.len().min(10) };
    (items[..keep].iter().collect(), items.len() - keep)
}

/// Plain text: a line per eventful row under its heading (every row with
/// `all`), the rest counted, what one side alone measured, and the verdict
/// last.
pub fn text(c: &Comparison, all: bool) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "base {}", runs_line(&c.base_label, &c.base_runs));
    let _ = writeln!(out, "new  {}", runs_line(&c.new_label, &c.new_runs));
    let differences = words::differences(c);
    if !differences.is_empty() {
        // The sides by name where they fit a line; the lines above name them.
        let mut head = format!("What differs ({} → {}):", c.base_label, c.new_label);
        if head.chars().count() > 120 {
            head = "What differs (base → new):".to_string();
        }
        let _ = writeln!(out, "{head}");
        for pieces in &differences {
            for line in words::wrap("  ", " ", pieces) {
                let _ = writeln!(out, "{line}");
            }
        }
    }
    let _ = writeln!(out, "{}", settings(c));
    for line in words::gate_line(c).iter().chain(&words::sample_sizes(c)).flat_map(|l| words::paragraph(l)) {
        let _ = writeln!(out, "{line}");
    }
    for line in incomplete(c) {
        let _ = writeln!(out, "INCOMPLETE: {line}");
    }
    for line in words::busy(c).iter().chain(&words::emulated(c)).flat_map(|l| words::paragraph(l)) {
        let _ = writeln!(out, "{line}");
    }
    if !c.newly_failed.is_empty() {
        let _ = writeln!(out, "\n{}:", newly_failed_heading(c));
        for failed in &c.newly_failed {
            let _ = writeln!(out, "  {}", failed.describe(&c.new_label));
        }
    }
    let level = format::percent(1.0 - c.alpha);
    for (heading, rows) in sections(c, all) {
        let _ = writeln!(out, "\n{heading}:");
        for (case, rows) in by_case(&rows) {
            let _ = writeln!(out, "  {case}:");
            let named: Vec<(String, Cells)> = rows.iter().map(|r| (figure_name(r), cells(r))).collect();
            let name_width = named.iter().map(|(n, _)| n.chars().count()).max().unwrap_or(0);
            let headline_width = named.iter().map(|(_, c)| c.headline.chars().count()).max().unwrap_or(0);
            for (name, cells) in named {
                let mut evidence = vec![cells.values];
                if !cells.ci.is_empty() {
                    evidence.push(format!("{level} CI {}", cells.ci));
                }
                if !cells.p.is_empty() {
                    evidence.push(format!("p={}", cells.p));
                }
                let note = if cells.note.is_empty() { String::new() } else { format!("— {}", cells.note) };
                let first = format!("{name:<name_width$}  {:<headline_width$}", cells.headline);
                for line in words::wrap("    ", "  ", &[first, format!("({})", evidence.join(", ")), note]) {
                    let _ = writeln!(out, "{line}");
                }
            }
        }
    }
    if let Some(line) = not_shown(c).filter(|_| !all) {
        let _ = writeln!(out);
        for line in words::paragraph(&line) {
            let _ = writeln!(out, "{line}");
        }
    }
    for (label, items) in [(&c.base_label, &c.only_base), (&c.new_label, &c.only_new)] {
        if items.is_empty() {
            continue;
        }
        let (shown, more) = listed(items, all);
        let _ = writeln!(out, "\nOnly in {label} ({}):", items.len());
        for line in shown.into_iter().flat_map(|item| words::wrap("  ", " ", std::slice::from_ref(item))) {
            let _ = writeln!(out, "{line}");
        }
        if more > 0 {
            let _ = writeln!(out, "  … and {more} more");
        }
    }
    for footer in footers(c) {
        let _ = writeln!(out);
        for line in words::paragraph(&footer) {
            let _ = writeln!(out, "{line}");
        }
    }
    let _ = writeln!(out);
    for line in words::paragraph(&verdict(c)) {
        let _ = writeln!(out, "{line}");
    }
    out
}

/// What the comparison says once after its rows: what "likely" means,
/// what is undecided and what would decide it, what moved outside the gate.
fn footers(c: &Comparison) -> Vec<String> {
    [words::likely_footer(c), words::undecided_footer(c), words::not_gated_footer(c)].into_iter().flatten().collect()
}

/// Rows grouped by their case (`tree-copy on ext4 (size=64 MiB)`), the
/// cases in order of first appearance, each case's rows in their order.
fn by_case<'a>(rows: &[&'a FigureComparison]) -> Vec<(String, Vec<&'a FigureComparison>)> {
    let mut groups: Vec<(String, Vec<&FigureComparison>)> = Vec::new();
    for &row in rows {
        let case = format::label(&row.scenario, None, &row.fs, &row.params);
        match groups.iter_mut().find(|(c, _)| *c == case) {
            Some((_, rows)) => rows.push(row),
            None => groups.push((case, vec![row])),
        }
    }
    groups
}

/// The figure's name, marked when it counts the whole host disk or is
/// outside the gate ([`marks`]).
fn figure_name(row: &FigureComparison) -> String {
    format!("{}{}", row.figure, marks(row))
}

/// A markdown cell or list item: on one line, control characters, pipes,
/// backticks and `<` escaped ([`crate::text::markdown`]).
fn md(text: &str) -> String {
    crate::text::markdown(text)
}

/// GitHub markdown: the same rows as [`text`] in one table, with the
/// counts, the one-sided lists and the verdict around it.
pub fn markdown(c: &Comparison, all: bool) -> String {
    let mut out = String::new();
    let (base, new) = (runs_line(&c.base_label, &c.base_runs), runs_line(&c.new_label, &c.new_runs));
    let _ = writeln!(out, "**{}** → **{}**", md(&base), md(&new));
    let differences = words::differences(c);
    if !differences.is_empty() {
        let _ = writeln!(out, "\nWhat differs ({} → {}):\n", md(&c.base_label), md(&c.new_label));
        for [what, base, new] in &differences {
            let _ = writeln!(out, "- {} {} {}", md(what), md(base), md(new));
        }
    }
    let _ = writeln!(out, "\n{}\n", settings(c));
    for line in words::gate_line(c).into_iter().chain(words::sample_sizes(c)) {
        let _ = writeln!(out, "{}\n", md(&line));
    }
    for line in incomplete(c) {
        let _ = writeln!(out, "**Incomplete:** {}\n", md(&line));
    }
    for line in words::busy(c).into_iter().chain(words::emulated(c)) {
        let _ = writeln!(out, "{}\n", md(&line));
    }
    if !c.newly_failed.is_empty() {
        let _ = writeln!(out, "{}:\n", md(&newly_failed_heading(c)));
        for failed in &c.newly_failed {
            let _ = writeln!(out, "- {}", md(&failed.describe(&c.new_label)));
        }
        out.push('\n');
    }
    let rows: Vec<&FigureComparison> = sections(c, all).into_iter().flat_map(|(_, rows)| rows).collect();
    if rows.is_empty() && c.newly_failed.is_empty() {
        out.push_str("No regressions, improvements or changes.\n");
    } else if rows.is_empty() {
        out.push_str("No figure regressed, improved or changed.\n");
    } else {
        let level = format::percent(1.0 - c.alpha);
        let _ = writeln!(out, "| Outcome | Figure | Change | Base → new | {level} CI | p | Note |");
        out.push_str("|---|---|---|---|---|---|---|\n");
        for row in rows {
            let cells = cells(row);
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {} |",
                row.outcome.words(),
                md(&cells.label),
                md(&cells.headline),
                md(&cells.values),
                md(&cells.ci),
                md(&cells.p),
                md(&cells.note)
            );
        }
    }
    if let Some(line) = not_shown(c).filter(|_| !all) {
        let _ = writeln!(out, "\n{}", md(&line));
    }
    for (label, items) in [(&c.base_label, &c.only_base), (&c.new_label, &c.only_new)] {
        if items.is_empty() {
            continue;
        }
        let (shown, more) = listed(items, all);
        let _ = writeln!(out, "\nOnly in {}:\n", md(label));
        for item in shown {
            let _ = writeln!(out, "- {}", md(item));
        }
        if more > 0 {
            let _ = writeln!(out, "- … and {more} more");
        }
    }
    for footer in footers(c) {
        let _ = writeln!(out, "\n{}", md(&footer));
    }
    let _ = writeln!(out, "\n**{}**", verdict(c));
    out
}

/// `{"schema":"fslab/1","compare":{...}}`, pretty, with a final newline.
/// Infinite factors and bounds are `null` (JSON has no infinity).
pub fn json(c: &Comparison) -> Vec<u8> {
    crate::json_document("compare", c)
}

/// Text made safe inside HTML elements and attributes, control characters
/// escaped ([`crate::text::xml`]).
fn escape(text: &str) -> String {
    crate::text::xml(text)
}

/// An HTML fragment for the top of the report page: what differs between
/// the sides (`<p class="differs">` and `<ul class="differs">`; one
/// `<p class="differs">` saying the setups match when nothing does), the
/// notes said once (`<p class="compare-note">`: the smallest p the
/// repeats allow, what "likely" means) and the verdict in one line (`<p
/// class="compare-verdict">`). No script, no style, nothing fetched; every
/// text is escaped.
pub fn html_summary(c: &Comparison) -> String {
    let mut out = String::new();
    let (base, new) = (escape(&c.base_label), escape(&c.new_label));
    let differences = words::differences(c);
    if differences.is_empty() {
        let _ = writeln!(
            out,
            "<p class=\"differs\">Same setup on both sides ({base} → {new}): fslab, kernel, machine, disk, tools, sysctls, \
             and each target's mkfs, mount options, conditions and start.</p>"
        );
    } else {
        let _ = writeln!(out, "<p class=\"differs\"><b>What differs</b> ({base} → {new}):</p>");
        out.push_str("<ul class=\"differs\">\n");
        for [what, base, new] in &differences {
            let _ = writeln!(out, "<li><b>{}</b> {} {}</li>", escape(what), escape(base), escape(new));
        }
        out.push_str("</ul>\n");
    }
    let notes = words::gate_line(c).into_iter().chain(words::sample_sizes(c)).chain(footers(c));
    for line in notes.chain(words::busy(c)).chain(words::emulated(c)).chain(incomplete(c)) {
        let _ = writeln!(out, "<p class=\"compare-note\">{}</p>", escape(&line));
    }
    let _ = writeln!(out, "<p class=\"compare-verdict\">{base} → {new}: {}</p>", escape(&verdict(c)));
    out
}

/// An HTML fragment for the report page's Comparison section: one
/// `<table class="compare">` with the rows `fslab compare` shows by
/// default (regressions, improvements, likely ones, changes), each `<tr>`
/// classed by its outcome ([`Outcome::name`]), the rest counted in its
/// footer with the one-sided items, and the verdict as its caption; what
/// differs and the notes are [`html_summary`]'s. The unchanged rows stay
/// out of the page: two preset runs have some 5,000 of them, over a MiB
/// of page saying nothing moved. No script, no style, nothing fetched;
/// every text is escaped.
pub fn html_table(c: &Comparison) -> String {
    let mut out = String::new();
    out.push_str("<table class=\"compare\">\n");
    let caption = format!("{} → {}: {}", c.base_label, c.new_label, verdict(c));
    let _ = writeln!(out, "<caption>{}</caption>", escape(&caption));
    let level = escape(&format::percent(1.0 - c.alpha));
    out.push_str("<thead><tr>");
    for head in ["Outcome", "Figure", "Change", "Base → new", &format!("{level} CI"), "p", "Note"] {
        let _ = write!(out, "<th>{head}</th>");
    }
    out.push_str("</tr></thead>\n");
    out.push_str("<tbody>\n");
    for failed in &c.newly_failed {
        let item = escape(&failed.describe(&c.new_label));
        let _ = writeln!(out, "<tr class=\"regression failed\"><td>newly failed</td><td colspan=\"6\">{item}</td></tr>");
    }
    let shown: Vec<&FigureComparison> = sections(c, false).into_iter().flat_map(|(_, rows)| rows).collect();
    for row in c.rows.iter().filter(|r| shown.iter().any(|s| std::ptr::eq(*s, *r))) {
        let cells = cells(row);
        let _ = write!(out, "<tr class=\"{}\"><td>{}</td>", row.outcome.name(), escape(row.outcome.words()));
        for cell in [&cells.label, &cells.headline, &cells.values, &cells.ci, &cells.p, &cells.note] {
            let _ = write!(out, "<td>{}</td>", escape(cell));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody>\n");
    let incomplete = incomplete(c);
    let hidden = not_shown_parts(c);
    if !c.only_base.is_empty() || !c.only_new.is_empty() || !incomplete.is_empty() || !hidden.is_empty() {
        out.push_str("<tfoot>\n");
        if !hidden.is_empty() {
            let line = format!("{} (fslab compare --all lists every figure).", hidden.join("; "));
            let _ = writeln!(out, "<tr class=\"not-shown\"><td>not shown</td><td colspan=\"6\">{}</td></tr>", escape(&line));
        }
        for line in &incomplete {
            let _ = writeln!(out, "<tr class=\"incomplete\"><td>incomplete</td><td colspan=\"6\">{}</td></tr>", escape(line));
        }
        for (label, items) in [(&c.base_label, &c.only_base), (&c.new_label, &c.only_new)] {
            for item in items {
                let (label, item) = (escape(label), escape(item));
                let _ = writeln!(out, "<tr class=\"only\"><td>only in {label}</td><td colspan=\"6\">{item}</td></tr>");
            }
        }
        out.push_str("</tfoot>\n");
    }
    out.push_str("</table>\n");
    out
}

#[cfg(test)]
mod tests;
