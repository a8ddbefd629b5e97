//! Dates and times the way StatusPro spells them.
//!
//! Dates come in as `YYYY-MM-DD` and go out as midnight UTC datetimes
//! (`2026-03-15T00:00:00+00:00`); event times go out to the second with an
//! explicit `+00:00` offset. Seed times derive from [`seed_base`]; new events use
//! the real clock.

use chrono::{DateTime, NaiveDate, Utc};

/// The wire format of every datetime.
const DATETIME_FORMAT: &str = "%Y-%m-%dT%H:%M:%S+00:00";

/// The seed's fixed instant and the real clock, shared by every sandbox.
pub(crate) use sandbox_kit::clock::{now, seed_base};

/// `2026-03-12T10:14:00+00:00`.
pub(crate) fn format_datetime(at: DateTime<Utc>) -> String {
    at.format(DATETIME_FORMAT).to_string()
}

/// A date as its midnight UTC datetime, `2026-03-15T00:00:00+00:00`.
pub(crate) fn format_date(date: NaiveDate) -> String {
    format!("{}T00:00:00+00:00", date.format("%Y-%m-%d"))
}

/// Parses a strict `YYYY-MM-DD` (zero-padded, a real calendar date).
pub(crate) fn parse_ymd(text: &str) -> Option<NaiveDate> {
    let bytes = text.as_bytes();
    let shape_ok = bytes.len() == 10
        && bytes[4] == b'-'
        && bytes[7] == b'-'
        && bytes
            .iter()
            .enumerate()
            .all(|(i, b)| i == 4 || i == 7 || b.is_ascii_digit());
    if !shape_ok {
        return None;
    }
    NaiveDate::parse_from_str(text, "%Y-%m-%d").ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_like_the_api() {
        assert_eq!(format_datetime(seed_base()), "2026-03-01T09:00:00+00:00");
        let date = NaiveDate::from_ymd_opt(2026, 3, 15).unwrap();
        assert_eq!(format_date(date), "2026-03-15T00:00:00+00:00");
    }

    #[test]
    fn parses_only_strict_dates() {
        assert!(parse_ymd("2026-03-15").is_some());
        for bad in [
            "2026-3-15",
            "2026-02-30",
            "15-03-2026",
            "2026/03/15",
            "",
            "2026-03-15T00:00:00",
        ] {
            assert!(parse_ymd(bad).is_none(), "{bad}");
        }
    }
}
