//! `fslab cleanup`, and the same duty at the start of every command that
//! makes targets (`run`, `exec`): release what runs killed by SIGKILL (or
//! a crash) left behind. Live runs hold a lock on their ledger and are
//! never touched. Reading commands (`map`, `runs`, `compare`, ...) neither
//! release nor mention dead runs: they change nothing on the machine.
//! `--cache` also empties the cache of aged images, after the dead runs
//! are released (an incomplete entry is theirs to remove first).

use std::process::ExitCode;

use serde::Serialize;

use super::CleanupArgs;
use crate::error::Result;
use crate::harness::cleanup_dead_runs;
use crate::age_cache::{self, ImageCache};
use crate::ledger::CleanedRun;

/// What `cleanup --cache` removed from the cache folder.
#[derive(Debug, Serialize)]
struct CacheCleared {
    /// The cache folder.
    path: std::path::PathBuf,
    /// Entries removed (complete or not).
    entries: usize,
    /// Bytes the removed files held on disk.
    bytes: u64,
    /// Entries left because a live run uses or makes them.
    in_use: usize,
}

/// Run `fslab cleanup`.
pub fn run(args: &CleanupArgs) -> Result<ExitCode> {
    let cleaned = cleanup_dead_runs(args.wait)?;
    let cache = if args.cache { Some(clear_cache(args)?) } else { None };
    let rendered = match (&cache, args.json) {
        (None, true) => crate::json_document("cleaned", &cleaned),
        (Some(cache), true) => {
            let doc = serde_json::json!({ "schema": crate::SCHEMA, "cleaned": cleaned, "cache": cache });
            let mut bytes = serde_json::to_vec_pretty(&doc).expect("plain data serialises");
            bytes.push(b'\n');
            bytes
        }
        (cache, false) => {
            let mut text = render_text(&cleaned);
            if let Some(cache) = cache {
                text.push_str(&render_cache(cache));
            }
            text.into_bytes()
        }
    };
    super::print(&rendered)?;
    let failed = cleaned.iter().any(|c| !c.failed.is_empty());
    Ok(if failed { ExitCode::from(crate::error::ErrorKind::Failed.exit_code()) } else { ExitCode::SUCCESS })
}

/// Empty the cache folder `--age-cache` (else `SCRATCH/age-cache`); one
/// that is not ours alone is refused (exit 3), an absent one is empty.
fn clear_cache(args: &CleanupArgs) -> Result<CacheCleared> {
    let dir = args.age_cache.clone().unwrap_or_else(|| age_cache::default_dir(&args.scratch));
    let Some(cache) = ImageCache::open_existing(&dir)? else {
        return Ok(CacheCleared { path: dir, entries: 0, bytes: 0, in_use: 0 });
    };
    let cleared = cache.clear()?;
    Ok(CacheCleared { path: cache.path().to_path_buf(), entries: cleared.entries, bytes: cleared.bytes, in_use: cleared.in_use })
}

fn render_cache(cache: &CacheCleared) -> String {
    let entries = |n: usize| if n == 1 { "entry" } else { "entries" };
    let kept = match cache.in_use {
        0 => String::new(),
        n => format!("; kept {n} {} a live run uses", entries(n)),
    };
    format!(
        "age cache {}: removed {} {} ({}){kept}\n",
        cache.path.display(),
        cache.entries,
        entries(cache.entries),
        crate::units::bytes_short(cache.bytes)
    )
}

/// Before `run` or `exec` make anything: release dead runs' leftovers,
/// saying so on stderr. A failure here must not stop the command the user
/// asked for.
pub fn on_start() {
    match cleanup_dead_runs(false) {
        Ok(cleaned) => {
            for run in cleaned.iter().filter(|r| !r.is_empty()) {
                eprint!("fslab: a dead run left resources: {run}");
            }
        }
        Err(e) => eprintln!("fslab: could not check for dead runs: {e}"),
    }
}

fn render_text(cleaned: &[CleanedRun]) -> String {
    if cleaned.is_empty() {
        return "nothing to clean up\n".to_string();
    }
    cleaned.iter().map(CleanedRun::to_string).collect()
}
