//! Run ids and timestamps: UTC, to the second, with no time-zone database.

use std::time::SystemTime;

/// A run id: UTC start time to the second, the process id and four random
/// bytes, e.g. `20261121T093015Z-4242-9f03a1c2`. It sorts by time; the
/// random part keeps ids apart when many machines share one store.
pub fn run_id() -> String {
    let (y, m, d, t) = utc_parts(now_secs());
    let mut random = [0u8; 4];
    // Without /dev/urandom the id is still unique on this machine.
    let _ = std::fs::File::open("/dev/urandom").and_then(|mut f| std::io::Read::read_exact(&mut f, &mut random));
    format!(
        "{y:04}{m:02}{d:02}T{:02}{:02}{:02}Z-{}-{:08x}",
        t / 3600,
        t / 60 % 60,
        t % 60,
        std::process::id(),
        u32::from_be_bytes(random)
    )
}

/// Now, RFC 3339 in UTC to the second (`2026-11-21T09:30:15Z`).
pub fn utc_now() -> String {
    let (y, m, d, t) = utc_parts(now_secs());
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z", t / 3600, t / 60 % 60, t % 60)
}

fn now_secs() -> u64 {
    SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}

/// Date and second of the day of a Unix time.
fn utc_parts(secs: u64) -> (i64, u32, u32, u64) {
    let (y, m, d) = civil_from_days((secs / 86_400) as i64);
    (y, m, d, secs % 86_400)
}

/// Days since 1970-01-01 to a proleptic Gregorian date (H. Hinnant's
/// `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_dates_are_right_at_known_days() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
        assert_eq!(civil_from_days(20_778), (2026, 11, 21));
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
    }

    #[test]
    fn run_ids_carry_the_pid() {
        let id = run_id();
        let pid = format!("Z-{}-", std::process::id());
        assert!(id.contains(&pid), "{id}");
        assert_eq!(id.len(), id.find(&pid).unwrap() + pid.len() + 8, "{id}");
        assert_eq!(id.find('T'), Some(8));
        assert_ne!(run_id(), id, "two ids in one second differ by their random part");
    }
}
