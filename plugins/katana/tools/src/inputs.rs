//! Input pieces the tools share: line-item arrays that may arrive as a JSON
//! string, the checks a schema cannot enforce on them, a schema transform
//! that keeps enums plain, and number and time formatting.
//!
//! Some clients send an array argument as a JSON string holding the array.
//! [`Lines`] accepts both: its schema is a real array of objects (every
//! nested field described, with an example) whose `type` also admits a
//! string, so the host lets the string through; the component parses it
//! and then checks the lines exactly as it checks an array.

use std::borrow::Cow;
use std::time::{SystemTime, UNIX_EPOCH};

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::de::{DeserializeOwned, Error as _};
use serde::{Deserialize, Deserializer};
use serde_json::Value;
use toolhost_sdk::ToolError;

/// A list of line items: a JSON array of objects, or a JSON string that
/// holds one.
#[derive(Debug, Clone, PartialEq)]
pub struct Lines<T>(pub Vec<T>);

impl<'de, T: DeserializeOwned> Deserialize<'de> for Lines<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = match Value::deserialize(deserializer)? {
            Value::String(text) => serde_json::from_str(&text).map_err(|e| {
                D::Error::custom(format!(
                    "the string given for the list is not a JSON array: {e}"
                ))
            })?,
            other => other,
        };
        let Value::Array(items) = value else {
            return Err(D::Error::custom("expected an array of objects"));
        };
        items
            .into_iter()
            .enumerate()
            .map(|(i, item)| {
                serde_json::from_value(item)
                    .map_err(|e| D::Error::custom(format!("line {}: {e}", i + 1)))
            })
            .collect::<Result<Vec<T>, D::Error>>()
            .map(Lines)
    }
}

impl<T: JsonSchema> JsonSchema for Lines<T> {
    fn schema_name() -> Cow<'static, str> {
        format!("Lines_{}", T::schema_name()).into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let mut schema = <Vec<T>>::json_schema(generator);
        // `items`, `minItems` and `maxItems` apply to arrays only, so a
        // string passes the host's check and is parsed here. Bound a list
        // with `extend("minItems" = …)`, not `length(…)`: `length` would
        // also cap the string's length.
        schema.insert("type".into(), serde_json::json!(["array", "string"]));
        schema
    }
}

impl<T> Lines<T> {
    /// The lines.
    pub fn as_slice(&self) -> &[T] {
        &self.0
    }
}

/// `Ok` when `lines` has at least one entry (a string-encoded list skips
/// the schema's `minItems`).
pub fn check_not_empty<T>(field: &str, lines: &Lines<T>) -> Result<(), ToolError> {
    if lines.0.is_empty() {
        Err(ToolError::validation(format!("{field} is empty"))
            .with_hint(format!("give at least one entry in {field}")))
    } else {
        Ok(())
    }
}

/// `Ok` when `value` is above zero and finite.
pub fn check_positive(field: &str, value: f64) -> Result<(), ToolError> {
    if value.is_finite() && value > 0.0 {
        Ok(())
    } else {
        Err(
            ToolError::validation(format!("{field} must be greater than 0, not {value}"))
                .with_hint(format!("give {field} as a positive number, e.g. 10")),
        )
    }
}

/// `Ok` when `value` is zero or more and finite.
pub fn check_not_negative(field: &str, value: f64) -> Result<(), ToolError> {
    if value.is_finite() && value >= 0.0 {
        Ok(())
    } else {
        Err(
            ToolError::validation(format!("{field} must not be negative, not {value}"))
                .with_hint(format!("give {field} as 0 or more, e.g. 2.5")),
        )
    }
}

pub use toolhost_sdk::schema::plain_enum;

/// A quantity or amount for people: no trailing `.0`, at most six decimals
/// (`20`, `2.5`, `0.3`).
pub fn num(value: f64) -> String {
    format!("{}", round(value))
}

/// `value` rounded to six decimals, so sums of prices read cleanly
/// (`0.1 + 0.2` is `0.3`); `-0` becomes `0`.
pub fn round(value: f64) -> f64 {
    (value * 1e6).round() / 1e6 + 0.0
}

/// The current time as ISO 8601 in UTC, e.g. `2025-03-01T09:30:00.000Z`.
pub fn now_iso() -> String {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    iso_from_unix_millis(now.as_millis() as i64)
}

/// `millis` since the epoch as ISO 8601 in UTC.
pub fn iso_from_unix_millis(millis: i64) -> String {
    let secs = millis.div_euclid(1000);
    let ms = millis.rem_euclid(1000);
    let (days, rest) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{ms:03}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

/// The calendar date `days` after 1970-01-01 (H. Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[derive(Debug, PartialEq, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    struct Line {
        /// The id.
        id: u64,
    }

    #[derive(Debug, Deserialize, JsonSchema)]
    struct Input {
        /// The lines.
        #[schemars(extend("minItems" = 1))]
        items: Lines<Line>,
    }

    #[test]
    fn lines_come_as_an_array_or_a_json_string() {
        let a: Input = serde_json::from_value(json!({"items": [{"id": 1}, {"id": 2}]})).unwrap();
        let s: Input =
            serde_json::from_value(json!({"items": "[{\"id\": 1}, {\"id\": 2}]"})).unwrap();
        assert_eq!(a.items, s.items);
        assert_eq!(a.items.0, vec![Line { id: 1 }, Line { id: 2 }]);
    }

    #[test]
    fn bad_lines_name_the_line() {
        let e = serde_json::from_value::<Input>(json!({"items": "[{\"id\": 1}, {\"idd\": 2}]"}))
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 2") && e.contains("idd"), "{e}");
        let e = serde_json::from_value::<Input>(json!({"items": "[{"}))
            .unwrap_err()
            .to_string();
        assert!(e.contains("not a JSON array"), "{e}");
        assert!(serde_json::from_value::<Input>(json!({"items": 3})).is_err());
    }

    #[test]
    fn the_schema_is_an_array_of_objects_that_admits_a_string() {
        let schema = serde_json::to_value(
            schemars::generate::SchemaSettings::draft2020_12()
                .with(|s| s.inline_subschemas = true)
                .into_generator()
                .into_root_schema_for::<Input>(),
        )
        .unwrap();
        let items = &schema["properties"]["items"];
        assert_eq!(items["type"], json!(["array", "string"]));
        assert_eq!(items["minItems"], 1);
        assert!(items.get("minLength").is_none() && items.get("maxLength").is_none());
        assert_eq!(items["items"]["type"], "object");
        assert_eq!(items["items"]["properties"]["id"]["description"], "The id.");
    }

    #[test]
    fn numbers_read_like_people_write_them() {
        assert_eq!(num(20.0), "20");
        assert_eq!(num(2.5), "2.5");
        assert_eq!(num(0.1 + 0.2), "0.3");
        assert_eq!(num(-0.0), "0");
    }

    #[test]
    fn timestamps_are_iso_8601_utc() {
        assert_eq!(iso_from_unix_millis(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(
            iso_from_unix_millis(1_709_285_400_123),
            "2024-03-01T09:30:00.123Z"
        );
        assert_eq!(
            iso_from_unix_millis(951_782_400_000),
            "2000-02-29T00:00:00.000Z"
        );
        assert!(now_iso().ends_with('Z'));
    }

    #[test]
    fn checks_name_the_field() {
        assert!(check_positive("quantity", 1.0).is_ok());
        assert!(
            check_positive("quantity", 0.0)
                .unwrap_err()
                .message
                .contains("quantity")
        );
        assert!(check_not_negative("price_per_unit", 0.0).is_ok());
        assert!(check_not_negative("price_per_unit", -1.0).is_err());
        assert!(check_not_empty("items", &Lines::<Line>(vec![])).is_err());
    }
}
