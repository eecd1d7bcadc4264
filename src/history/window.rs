//! What lies between the two runs either side of a change: the kernel,
//! fslab's version and the `commit:`/`version:` tags they carry, and the
//! `fslab bisect` that would find which change did it, ready to run.

use crate::record::RunRecord;
use crate::record::release::debian_name;

/// The window a change falls in.
#[derive(Debug, Clone, PartialEq)]
pub struct Window {
    /// The last run before the change.
    pub before: String,
    /// The first run after it.
    pub after: String,
    /// What differs between them, each `what: A → B`.
    pub differs: Vec<String>,
    /// The command that bisects the window, when it has an axis fslab can
    /// bisect (Debian kernels, or commits named by `commit:` tags).
    pub bisect: Option<String>,
}

/// The window between `before` and `after` for a change of `figure` in
/// the cases at `place` (its kernel read from the case's conditions when
/// it ran in a guest).
pub fn between(before: &RunRecord, after: &RunRecord, figure: &str, place_kernel: (Option<&str>, Option<&str>)) -> Window {
    let mut differs = Vec::new();
    let kernel_a = place_kernel.0.unwrap_or(&before.environment.kernel);
    let kernel_b = place_kernel.1.unwrap_or(&after.environment.kernel);
    if kernel_a != kernel_b {
        differs.push(format!("kernel: {kernel_a} → {kernel_b}"));
    }
    if before.environment.fslab_version != after.environment.fslab_version {
        differs.push(format!("fslab: {} → {}", before.environment.fslab_version, after.environment.fslab_version));
    }
    let tagged = |run: &RunRecord, prefix: &str| run.tags.iter().find_map(|t| t.strip_prefix(prefix)).map(str::to_string);
    for prefix in ["commit:", "version:"] {
        let (a, b) = (tagged(before, prefix), tagged(after, prefix));
        if a != b {
            let shown = |v: &Option<String>| v.clone().unwrap_or_else(|| "none".into());
            differs.push(format!("{}: {} → {}", prefix.trim_end_matches(':'), shown(&a), shown(&b)));
        }
    }
    let axis = match (tagged(before, "commit:"), tagged(after, "commit:")) {
        (Some(a), Some(b)) if a != b => {
            Some(vec!["--repo".into(), "DIR".into(), "--good".into(), a, "--bad".into(), b, "--build".into(), "CMD".into()])
        }
        _ => match (debian_name(kernel_a), debian_name(kernel_b)) {
            (Some(a), Some(b)) if a != b => Some(vec!["--kernel".into(), format!("debian:{a}..{b}")]),
            _ => None,
        },
    };
    let bisect = axis.and_then(|axis| bisect_command(after, figure, axis));
    Window { before: before.id.clone(), after: after.id.clone(), differs, bisect }
}

/// `fslab bisect AXIS --figure FIGURE` with the stored run's own work and
/// target flags (its command line, the flags that only shape a run's
/// output or storing left out); none when the run's command is not an
/// `exec` or a `run` of one scenario.
fn bisect_command(run: &RunRecord, figure: &str, axis: Vec<String>) -> Option<String> {
    let at = run.command.iter().position(|w| w == "exec" || w == "run")?;
    let (verb, rest) = (&run.command[at], &run.command[at + 1..]);
    let mut words: Vec<String> = vec!["fslab".into(), "bisect".into()];
    words.extend(axis);
    words.extend(["--figure".to_string(), figure.to_string()]);
    let dropped = ["--tag", "--store", "--repeat", "--progress", "--kernel", "--plan", "--shard", "--preset"];
    let alone = ["--json", "--no-store"];
    let mut i = 0;
    let mut scenario_named = verb == "exec";
    while i < rest.len() {
        let word = &rest[i];
        if word == "--" {
            words.extend(rest[i..].iter().cloned());
            break;
        }
        let flag = word.split('=').next().unwrap_or(word);
        if dropped.contains(&flag) {
            i += if word.contains('=') { 1 } else { 2 };
            continue;
        }
        if alone.contains(&word.as_str()) {
            i += 1;
            continue;
        }
        if !word.starts_with('-') && !scenario_named && !rest[..i].last().is_some_and(|p| p.starts_with("--") && !p.contains('='))
        {
            if word.contains(',') {
                return None;
            }
            words.extend(["--scenario".to_string(), word.clone()]);
            scenario_named = true;
            i += 1;
            continue;
        }
        words.push(word.clone());
        i += 1;
    }
    scenario_named.then(|| shell_words::join(&words))
}
