//! `--parse fio`: fio's own results (`--output-format=json` on stdout) as
//! figures of the case, so they are stored and compared like any other.
//!
//! For each job and each direction (read, write, trim) that did I/O:
//! `fio_JOB_DIR_bw_bytes` (bytes/s, fio's `bw_bytes` as printed),
//! `fio_JOB_DIR_iops`, and the completion latency percentiles
//! `fio_JOB_DIR_clat_p50_s` and `_p99_s` (fio's nanoseconds in seconds).
//! All are timings: bandwidth and IOPS better higher, latency lower. A job
//! name is kept to letters, digits and `_`; a name fio repeats (numjobs
//! without group_reporting) gets `_2`, `_3`... in job order.

use crate::record::{Better, Figures, Kind};

/// The directions fio reports per job, in its own order.
const DIRECTIONS: [&str; 3] = ["read", "write", "trim"];

/// The figures of fio's JSON report in `stdout`, or why there are none
/// (what to give fio instead).
pub fn figures(stdout: &str) -> Result<Figures, String> {
    let report = first_json_object(stdout).ok_or_else(|| {
        "--parse fio: the command's stdout holds no JSON object; give fio --output-format=json \
         (and leave its stdout to fslab)"
            .to_string()
    })?;
    let jobs = report.get("jobs").and_then(|j| j.as_array()).ok_or_else(|| {
        "--parse fio: the JSON on stdout has no `jobs` list: is the command fio with --output-format=json?".to_string()
    })?;
    let mut figures = Figures::new();
    let mut seen: Vec<String> = Vec::new();
    for job in jobs {
        let base = job_name(job.get("jobname").and_then(|n| n.as_str()).unwrap_or("job"));
        let count = seen.iter().filter(|s| **s == base).count();
        seen.push(base.clone());
        let name = if count == 0 { base } else { format!("{base}_{}", count + 1) };
        for direction in DIRECTIONS {
            let Some(stats) = job.get(direction) else { continue };
            let ios = stats.get("total_ios").and_then(|n| n.as_u64()).unwrap_or(0);
            if ios == 0 {
                continue;
            }
            let prefix = format!("fio_{name}_{direction}");
            let number = |key: &str| stats.get(key).and_then(|n| n.as_f64());
            let percentile = |p: &str| {
                stats.get("clat_ns").and_then(|c| c.get("percentile")).and_then(|c| c.get(p)).and_then(|n| n.as_f64())
            };
            let no_value = "fio printed no such value";
            let no_percentile = "fio printed no clat percentiles (was clat_percentiles turned off?)";
            let rate = Better::Higher;
            figures.set_opt(&format!("{prefix}_bw_bytes"), number("bw_bytes"), "bytes/s", rate, Kind::Timing, no_value);
            figures.set_opt(&format!("{prefix}_iops"), number("iops"), "IO/s", rate, Kind::Timing, no_value);
            for (p, label) in [("50.000000", "p50"), ("99.000000", "p99")] {
                let seconds = percentile(p).map(|ns| ns / 1e9);
                figures.set_opt(&format!("{prefix}_clat_{label}_s"), seconds, "s", Better::Lower, Kind::Timing, no_percentile);
            }
        }
    }
    Ok(figures)
}

/// The first JSON object in `text`: fio may print notes before it.
fn first_json_object(text: &str) -> Option<serde_json::Value> {
    let mut from = 0;
    while let Some(at) = text[from..].find('{') {
        let start = from + at;
        let mut values = serde_json::Deserializer::from_str(&text[start..]).into_iter::<serde_json::Value>();
        if let Some(Ok(value @ serde_json::Value::Object(_))) = values.next() {
            return Some(value);
        }
        from = start + 1;
    }
    None
}

/// A job name as part of a figure name: letters, digits and `_`.
fn job_name(name: &str) -> String {
    let kept: String = name.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect();
    if kept.is_empty() { "job".to_string() } else { kept }
}

#[cfg(test)]
mod tests {
    use super::*;

    const REPORT: &str = r#"note: both iodepth >= 1 and synchronous I/O engine are selected
{
  "fio version" : "fio-3.33",
  "jobs" : [
    { "jobname" : "w", "read" : { "total_ios" : 0, "bw_bytes" : 0, "iops" : 0.0 },
      "write" : { "total_ios" : 1024, "bw_bytes" : 2097152000, "iops" : 32000.0,
                  "clat_ns" : { "percentile" : { "50.000000" : 18304, "99.000000" : 63744 } } } },
    { "jobname" : "w", "write" : { "total_ios" : 8, "bw_bytes" : 10, "iops" : 1.5, "clat_ns" : {} } },
    { "jobname" : "r-1.x", "read" : { "total_ios" : 4, "bw_bytes" : 7, "iops" : 2.0,
                  "clat_ns" : { "percentile" : { "50.000000" : 1000, "99.000000" : 2000 } } } }
  ]
}
"#;

    #[test]
    fn each_job_and_direction_that_did_io_becomes_figures() {
        let f = figures(REPORT).unwrap();
        assert_eq!(f.value("fio_w_write_bw_bytes"), Some(2097152000.0));
        assert_eq!(f.value("fio_w_write_iops"), Some(32000.0));
        assert_eq!(f.value("fio_w_write_clat_p50_s"), Some(18304.0 / 1e9));
        assert_eq!(f.value("fio_w_write_clat_p99_s"), Some(63744.0 / 1e9));
        assert_eq!(f.get("fio_w_read_bw_bytes"), None, "no read I/O, no read figures");
        let bw = f.get("fio_w_write_bw_bytes").unwrap();
        assert_eq!((bw.unit.as_ref(), bw.better, bw.kind), ("bytes/s", Better::Higher, Kind::Timing));
        assert_eq!(f.get("fio_w_write_clat_p99_s").unwrap().better, Better::Lower);
        // A repeated name gets a number; a missing percentile says why.
        assert_eq!(f.value("fio_w_2_write_bw_bytes"), Some(10.0));
        assert!(f.get("fio_w_2_write_clat_p50_s").unwrap().missing.as_deref().unwrap().contains("percentiles"));
        assert_eq!(f.value("fio_r_1_x_read_clat_p99_s"), Some(2e-6));
    }

    #[test]
    fn output_that_is_not_fio_json_says_what_to_give() {
        assert!(figures("fio: no such option").unwrap_err().contains("--output-format=json"));
        assert!(figures("{\"x\": 1}").unwrap_err().contains("jobs"));
        assert!(figures("{ broken } {\"jobs\": []}").unwrap().iter().next().is_none());
    }
}
