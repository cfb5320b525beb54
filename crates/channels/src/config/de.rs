//! Reading one section of the configuration file with serde, keeping the path and the expected
//! type of a refused value but never the value itself.
//!
//! A section (a `toml::Value` the TOML parser produced) is deserialised into a channel's raw
//! `*Toml` struct through [`ValueDeserializer`], whose error type [`Refusal`] records only what
//! serde says was expected (`a string`, `i64`, the known field names): serde's own texts for a
//! wrong type quote the value (`invalid type: string "xoxb-…", expected …`), which for a secret in
//! the wrong field would print the secret. `serde_path_to_error` adds the path (`chats[0]`).

use std::fmt;

use serde::de::value::{MapDeserializer, SeqDeserializer};
use serde::de::{self, DeserializeOwned, IntoDeserializer, Visitor};

/// Why serde refused a section, without the value it refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// A key the raw struct does not have (`deny_unknown_fields`), and the keys it has.
    Unknown {
        /// The key as written.
        key: String,
        /// The raw struct's fields, in declaration order.
        known: &'static [&'static str],
    },
    /// A value of the wrong type, or out of the type's range: what serde expected.
    Wrong {
        /// serde's description of the expected value (`a string`, `i64`, `a sequence`).
        expected: String,
    },
    /// A required field is absent (the raw structs have none: every field is optional).
    Missing {
        /// The field.
        key: &'static str,
    },
    /// Any other refusal of a `Deserialize` impl (its message is dropped: it may quote a value).
    Other,
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::Unknown { key, known } => {
                write!(f, "unknown key `{key}` (known: {})", known.join(", "))
            }
            Refusal::Wrong { expected } => write!(f, "must be {}", friendly(expected)),
            Refusal::Missing { key } => write!(f, "needs `{key}`"),
            Refusal::Other => f.write_str("holds a value that cannot be used"),
        }
    }
}

impl std::error::Error for Refusal {}

impl de::Error for Refusal {
    fn custom<T: fmt::Display>(_msg: T) -> Refusal {
        Refusal::Other
    }

    fn invalid_type(_unexpected: de::Unexpected<'_>, expected: &dyn de::Expected) -> Refusal {
        Refusal::Wrong {
            expected: expected.to_string(),
        }
    }

    fn invalid_value(_unexpected: de::Unexpected<'_>, expected: &dyn de::Expected) -> Refusal {
        Refusal::Wrong {
            expected: expected.to_string(),
        }
    }

    fn invalid_length(_len: usize, expected: &dyn de::Expected) -> Refusal {
        Refusal::Wrong {
            expected: expected.to_string(),
        }
    }

    fn unknown_field(field: &str, expected: &'static [&'static str]) -> Refusal {
        Refusal::Unknown {
            key: field.to_owned(),
            known: expected,
        }
    }

    fn missing_field(field: &'static str) -> Refusal {
        Refusal::Missing { key: field }
    }
}

/// serde's description of an expected value in the file's words: `true or false` for a
/// boolean, `an integer` for any integer type, `a list` for a sequence.
pub(crate) fn friendly(expected: &str) -> &str {
    match expected {
        "a boolean" => "true or false",
        "i8" | "i16" | "i32" | "i64" | "u8" | "u16" | "u32" | "u64" => "an integer",
        "a sequence" => "a list",
        other => other,
    }
}

/// A TOML value as a serde deserialiser whose errors are [`Refusal`]s.
#[derive(Debug)]
pub(crate) struct ValueDeserializer(pub(crate) toml::Value);

impl<'de> de::Deserializer<'de> for ValueDeserializer {
    type Error = Refusal;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Refusal> {
        match self.0 {
            toml::Value::String(s) => visitor.visit_string(s),
            toml::Value::Integer(i) => visitor.visit_i64(i),
            toml::Value::Float(x) => visitor.visit_f64(x),
            toml::Value::Boolean(b) => visitor.visit_bool(b),
            // No key of the file takes a date: refused as the type the key wants.
            toml::Value::Datetime(_) => Err(de::Error::invalid_type(
                de::Unexpected::Other("a date-time"),
                &visitor,
            )),
            toml::Value::Array(items) => {
                let mut seq = SeqDeserializer::new(items.into_iter().map(ValueDeserializer));
                let out = visitor.visit_seq(&mut seq)?;
                seq.end()?;
                Ok(out)
            }
            toml::Value::Table(table) => {
                let mut map =
                    MapDeserializer::new(table.into_iter().map(|(k, v)| (k, ValueDeserializer(v))));
                let out = visitor.visit_map(&mut map)?;
                map.end()?;
                Ok(out)
            }
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Refusal> {
        // A key that is present holds a value (TOML has no null).
        visitor.visit_some(self)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Refusal> {
        visitor.visit_newtype_struct(self)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        unit unit_struct seq tuple tuple_struct map struct enum identifier ignored_any
    }
}

impl<'de> IntoDeserializer<'de, Refusal> for ValueDeserializer {
    type Deserializer = ValueDeserializer;

    fn into_deserializer(self) -> ValueDeserializer {
        self
    }
}

/// Deserialises `value` into `T`; on refusal, the path inside `value` (`chats[0]`, empty for
/// `value` itself) and the [`Refusal`].
pub(crate) fn read<T: DeserializeOwned>(value: toml::Value) -> Result<T, (String, Refusal)> {
    serde_path_to_error::deserialize(ValueDeserializer(value)).map_err(|e| {
        let path = e.path().to_string();
        // serde_path_to_error names the root `.`.
        let path = if path == "." { String::new() } else { path };
        (path, e.into_inner())
    })
}

#[cfg(test)]
/// The fields of the raw struct `T` (with `deny_unknown_fields`), in declaration order: what
/// serde lists when it meets a key `T` does not have.
pub(crate) fn fields_of<T: DeserializeOwned>() -> &'static [&'static str] {
    let mut probe = toml::Table::new();
    probe.insert("\u{0}".to_owned(), toml::Value::Boolean(true));
    match read::<T>(toml::Value::Table(probe)) {
        Err((_, Refusal::Unknown { known, .. })) => known,
        _ => &[],
    }
}
