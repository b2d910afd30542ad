//! A field read from the cluster is one of three things: absent, present but unreadable, or
//! known. Keeping "unreadable" apart from "absent" is what lets the report say "unknown" instead
//! of hiding a broken object behind a default.

use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Field<T> {
    #[default]
    Missing,
    /// Present with the wrong type or an unparsable value; holds a short rendering of it.
    Invalid(String),
    Known(T),
}

impl<T> Field<T> {
    pub fn known(&self) -> Option<&T> {
        match self {
            Field::Known(v) => Some(v),
            _ => None,
        }
    }

    pub fn is_known(&self) -> bool {
        matches!(self, Field::Known(_))
    }

    pub fn is_invalid(&self) -> bool {
        matches!(self, Field::Invalid(_))
    }

    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Field<U> {
        match self {
            Field::Known(v) => Field::Known(f(v)),
            Field::Missing => Field::Missing,
            Field::Invalid(s) => Field::Invalid(s),
        }
    }

    /// The value, or `default` only when the field is absent: an invalid value stays `None`
    /// so callers must decide what "unknown" means for them.
    pub fn or_default_if_missing(&self, default: T) -> Option<T>
    where
        T: Clone,
    {
        match self {
            Field::Known(v) => Some(v.clone()),
            Field::Missing => Some(default),
            Field::Invalid(_) => None,
        }
    }
}

impl Field<String> {
    pub fn as_deref(&self) -> Option<&str> {
        self.known().map(String::as_str)
    }

    /// For display: the value, `-` when absent, `unknown (<raw>)` when unreadable.
    pub fn display(&self) -> String {
        match self {
            Field::Known(v) => v.clone(),
            Field::Missing => "-".to_string(),
            Field::Invalid(raw) => format!("unknown ({raw})"),
        }
    }
}

impl Field<std::sync::Arc<str>> {
    pub fn as_deref(&self) -> Option<&str> {
        self.known().map(|s| &**s)
    }

    /// For display: the value, `-` when absent, `unknown (<raw>)` when unreadable.
    pub fn display(&self) -> String {
        match self {
            Field::Known(v) => v.to_string(),
            Field::Missing => "-".to_string(),
            Field::Invalid(raw) => format!("unknown ({raw})"),
        }
    }
}

impl<T: Serialize> Serialize for Field<T> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Field::Known(v) => v.serialize(s),
            Field::Missing => s.serialize_none(),
            Field::Invalid(raw) => s.serialize_str(&format!("unknown ({raw})")),
        }
    }
}
