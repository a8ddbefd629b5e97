//! Reading client input the way Laravel does: query strings and JSON bodies.
//!
//! Both readers record problems into a [`FieldErrors`] and carry on, so one
//! 422 lists every field that is wrong.
//!
//! Query strings are parsed from the raw text, not with a typed extractor,
//! because PHP spells arrays as repeated bracketed keys: `tags[]=a&tags[]=b`
//! (or `tags[0]=a&tags[1]=b`). A plain `tags=a` is not an array and is
//! rejected, as the real API would; a bracketed key for a scalar field is
//! rejected too. Empty values count as absent (Laravel turns empty strings
//! into null). For a repeated scalar key the last value wins, as in PHP.
//!
//! JSON bodies: an empty body is an empty object; malformed JSON or a
//! non-object is a 400. Booleans accept `true`/`false`, `0`/`1` and
//! `"0"`/`"1"`/`"true"`/`"false"`; integers accept JSON integers and digit
//! strings; null counts as absent.

use std::collections::HashMap;

use chrono::NaiveDate;
use serde_json::{Map, Value};

use crate::{
    clock,
    error::{ApiError, FieldErrors, display},
    seed::{self, StatusInfo},
};

/// A parsed query string: scalar keys and PHP-style array keys.
#[derive(Debug, Default)]
pub(crate) struct QueryParams {
    /// `key=value`, last value wins, empty values dropped.
    scalars: HashMap<String, String>,
    /// `key[]=value` and `key[N]=value`, in order, empty values dropped.
    arrays: HashMap<String, Vec<String>>,
}

impl QueryParams {
    /// Parses a raw query string (without `?`).
    pub fn parse(raw: Option<&str>) -> Self {
        let mut params = Self::default();
        for (key, value) in form_urlencoded::parse(raw.unwrap_or_default().as_bytes()) {
            let array_base = key.strip_suffix("[]").or_else(|| {
                let (base, index) = key.strip_suffix(']')?.split_once('[')?;
                index.bytes().all(|b| b.is_ascii_digit()).then_some(base)
            });
            match array_base {
                Some(base) => {
                    let values = params.arrays.entry(base.to_owned()).or_default();
                    if !value.is_empty() {
                        values.push(value.into_owned());
                    }
                }
                None => {
                    if value.is_empty() {
                        params.scalars.remove(key.as_ref());
                    } else {
                        params.scalars.insert(key.into_owned(), value.into_owned());
                    }
                }
            }
        }
        params
    }

    /// A scalar parameter; an array under that name is an error.
    pub fn scalar(&self, name: &str, errors: &mut FieldErrors) -> Option<&str> {
        if self.arrays.contains_key(name) {
            errors.add(
                name,
                format!("The {} field must be a string.", display(name)),
            );
            return None;
        }
        self.scalars.get(name).map(String::as_str)
    }

    /// An array parameter (empty when absent); a scalar under that name is an error.
    pub fn array(&self, name: &str, errors: &mut FieldErrors) -> Vec<String> {
        if self.scalars.contains_key(name) {
            errors.add(
                name,
                format!("The {} field must be an array.", display(name)),
            );
            return Vec::new();
        }
        self.arrays.get(name).cloned().unwrap_or_default()
    }

    /// An array parameter whose elements must be one of `allowed`; bad elements
    /// are reported as `name.INDEX`.
    pub fn enum_array(
        &self,
        name: &str,
        allowed: &[&str],
        errors: &mut FieldErrors,
    ) -> Vec<String> {
        let values = self.array(name, errors);
        for (index, value) in values.iter().enumerate() {
            if !allowed.contains(&value.as_str()) {
                let key = format!("{name}.{index}");
                errors.add(&key, format!("The selected {key} is invalid."));
            }
        }
        values
    }

    /// An integer parameter with an inclusive range.
    pub fn integer_in(
        &self,
        name: &str,
        range: std::ops::RangeInclusive<i64>,
        errors: &mut FieldErrors,
    ) -> Option<i64> {
        let text = self.scalar(name, errors)?;
        let Ok(value) = text.trim().parse::<i64>() else {
            errors.add(
                name,
                format!("The {} field must be an integer.", display(name)),
            );
            return None;
        };
        if range.contains(&value) {
            return Some(value);
        }
        let message = if *range.end() == i64::MAX {
            format!(
                "The {} field must be at least {}.",
                display(name),
                range.start()
            )
        } else {
            format!(
                "The {} field must be between {} and {}.",
                display(name),
                range.start(),
                range.end()
            )
        };
        errors.add(name, message);
        None
    }

    /// A boolean parameter: `1`, `0`, `true`, `false`.
    pub fn boolean(&self, name: &str, errors: &mut FieldErrors) -> Option<bool> {
        let text = self.scalar(name, errors)?;
        match text.to_ascii_lowercase().as_str() {
            "1" | "true" => Some(true),
            "0" | "false" => Some(false),
            _ => {
                errors.add(
                    name,
                    format!("The {} field must be true or false.", display(name)),
                );
                None
            }
        }
    }

    /// A `YYYY-MM-DD` parameter.
    pub fn date(&self, name: &str, errors: &mut FieldErrors) -> Option<NaiveDate> {
        let text = self.scalar(name, errors)?;
        let date = clock::parse_ymd(text);
        if date.is_none() {
            errors.add(name, date_format_message(name));
        }
        date
    }
}

/// Laravel's `date_format:Y-m-d` message.
pub(crate) fn date_format_message(name: &str) -> String {
    format!("The {} field must match the format Y-m-d.", display(name))
}

/// Parses a JSON request body into an object.
pub(crate) fn parse_body(bytes: &[u8]) -> Result<Map<String, Value>, ApiError> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(Map::new());
    }
    match serde_json::from_slice::<Value>(bytes) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(ApiError::BadRequest(
            "The request body must be a JSON object.".to_owned(),
        )),
        Err(err) => Err(ApiError::BadRequest(format!(
            "The request body is not valid JSON: {err}."
        ))),
    }
}

/// Typed reads of one JSON object body.
#[derive(Debug)]
pub(crate) struct JsonInput<'a> {
    /// The body.
    map: &'a Map<String, Value>,
}

impl<'a> JsonInput<'a> {
    /// Wraps a parsed body.
    pub fn new(map: &'a Map<String, Value>) -> Self {
        Self { map }
    }

    /// Whether the key is present at all, null included.
    pub fn present(&self, name: &str) -> bool {
        self.map.contains_key(name)
    }

    /// The value, treating null as absent.
    pub fn get(&self, name: &str) -> Option<&'a Value> {
        self.map.get(name).filter(|value| !value.is_null())
    }

    /// An optional boolean with a default.
    pub fn boolean(&self, name: &str, default: bool, errors: &mut FieldErrors) -> bool {
        let Some(value) = self.get(name) else {
            return default;
        };
        let parsed = match value {
            Value::Bool(b) => Some(*b),
            Value::Number(n) => match n.as_i64() {
                Some(0) => Some(false),
                Some(1) => Some(true),
                _ => None,
            },
            Value::String(s) => match s.to_ascii_lowercase().as_str() {
                "0" | "false" => Some(false),
                "1" | "true" => Some(true),
                _ => None,
            },
            _ => None,
        };
        parsed.unwrap_or_else(|| {
            errors.add(
                name,
                format!("The {} field must be true or false.", display(name)),
            );
            default
        })
    }

    /// An optional string; the empty string counts as absent.
    pub fn string(&self, name: &str, errors: &mut FieldErrors) -> Option<String> {
        match self.get(name)? {
            Value::String(s) if s.is_empty() => None,
            Value::String(s) => Some(s.clone()),
            _ => {
                errors.add(
                    name,
                    format!("The {} field must be a string.", display(name)),
                );
                None
            }
        }
    }

    /// A string with a length range in characters; `required` adds the
    /// required rule.
    pub fn text(
        &self,
        name: &str,
        required: bool,
        length: std::ops::RangeInclusive<usize>,
        errors: &mut FieldErrors,
    ) -> Option<String> {
        let Some(text) = self.string(name, errors) else {
            if required && !errors.has(name) {
                errors.add(name, format!("The {} field is required.", display(name)));
            }
            return None;
        };
        let chars = text.chars().count();
        if chars < *length.start() {
            errors.add(
                name,
                format!(
                    "The {} field must be at least {} characters.",
                    display(name),
                    length.start()
                ),
            );
            return None;
        }
        if chars > *length.end() {
            errors.add(
                name,
                format!(
                    "The {} field must not be greater than {} characters.",
                    display(name),
                    length.end()
                ),
            );
            return None;
        }
        Some(text)
    }

    /// An optional integer.
    pub fn integer(&self, name: &str, errors: &mut FieldErrors) -> Option<i64> {
        let value = self.get(name)?;
        let parsed = as_integer(value);
        if parsed.is_none() {
            errors.add(
                name,
                format!("The {} field must be an integer.", display(name)),
            );
        }
        parsed
    }

    /// An optional `YYYY-MM-DD` date.
    pub fn date(&self, name: &str, errors: &mut FieldErrors) -> Option<NaiveDate> {
        let text = self.string(name, errors)?;
        let date = clock::parse_ymd(&text);
        if date.is_none() {
            errors.add(name, date_format_message(name));
        }
        date
    }

    /// The required `status_code`, which must name a catalog status.
    pub fn status_code(&self, errors: &mut FieldErrors) -> Option<&'static StatusInfo> {
        const NAME: &str = "status_code";
        let Some(code) = self.string(NAME, errors) else {
            if !errors.has(NAME) {
                errors.add(NAME, "The status code field is required.");
            }
            return None;
        };
        let info = seed::status_info(&code);
        if info.is_none() {
            errors.add(NAME, "The selected status code is invalid.");
        }
        info
    }
}

/// A JSON integer or a string of digits (optionally signed).
pub(crate) fn as_integer(value: &Value) -> Option<i64> {
    match value {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => {
            let digits = s.strip_prefix('-').unwrap_or(s);
            if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
                s.parse().ok()
            } else {
                None
            }
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_arrays_need_brackets() {
        let params = QueryParams::parse(Some(
            "tags[]=a&tags[]=b%20c&tags_any[0]=x&search=&page=2&page=3&status_code=st000001",
        ));
        let mut errors = FieldErrors::default();
        assert_eq!(params.array("tags", &mut errors), ["a", "b c"]);
        assert_eq!(params.array("tags_any", &mut errors), ["x"]);
        assert_eq!(params.scalar("search", &mut errors), None);
        assert_eq!(params.scalar("page", &mut errors), Some("3"));
        assert!(errors.finish().is_ok());

        let params = QueryParams::parse(Some("tags=a&search[]=x"));
        let mut errors = FieldErrors::default();
        assert!(params.array("tags", &mut errors).is_empty());
        assert_eq!(params.scalar("search", &mut errors), None);
        assert!(errors.has("tags") && errors.has("search"));
    }

    #[test]
    fn integers_accept_digit_strings_only() {
        assert_eq!(as_integer(&Value::from(5)), Some(5));
        assert_eq!(
            as_integer(&Value::from("6110375248001")),
            Some(6_110_375_248_001)
        );
        assert_eq!(as_integer(&Value::from("12a")), None);
        assert_eq!(as_integer(&Value::from(1.5)), None);
        assert_eq!(as_integer(&Value::Bool(true)), None);
    }

    #[test]
    fn bodies_must_be_objects() {
        assert!(parse_body(b"").unwrap().is_empty());
        assert!(matches!(parse_body(b"[1]"), Err(ApiError::BadRequest(_))));
        assert!(matches!(parse_body(b"{"), Err(ApiError::BadRequest(_))));
    }
}
