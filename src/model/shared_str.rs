//! A string many objects hold the same copy of (a namespace): one allocation shared through
//! `history::shared`'s pool, read as a `&str`, compared with `str` and `String` as a `String`
//! would be, so that code reading it does not change.

use std::borrow::Borrow;
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SharedStr(Arc<str>);

impl SharedStr {
    /// The pool's copy of `s` (a copy of its own past the pool's cap).
    pub fn new(s: &str) -> Self {
        SharedStr(super::history::shared(s))
    }

    /// A copy of its own, outside the pool: for a value few objects share (an object's name),
    /// which other holders (its store key) then share by cloning.
    pub fn own(s: &str) -> Self {
        SharedStr(Arc::from(s))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A name made a `SharedStr` without the pool (names are all different, and would only fill
/// it): a `SharedStr` is kept as it is, shared; text becomes a copy of its own.
pub trait OwnStr {
    fn own_str(self) -> SharedStr;
}

impl OwnStr for SharedStr {
    fn own_str(self) -> SharedStr {
        self
    }
}

impl OwnStr for &SharedStr {
    fn own_str(self) -> SharedStr {
        self.clone()
    }
}

impl OwnStr for &str {
    fn own_str(self) -> SharedStr {
        SharedStr::own(self)
    }
}

impl OwnStr for String {
    fn own_str(self) -> SharedStr {
        SharedStr::own(&self)
    }
}

impl OwnStr for &String {
    fn own_str(self) -> SharedStr {
        SharedStr::own(self)
    }
}

impl Default for SharedStr {
    fn default() -> Self {
        SharedStr::new("")
    }
}

impl Deref for SharedStr {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for SharedStr {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl Borrow<str> for SharedStr {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for SharedStr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&*self.0, f)
    }
}

impl fmt::Debug for SharedStr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl From<&str> for SharedStr {
    fn from(s: &str) -> Self {
        SharedStr::new(s)
    }
}

impl From<String> for SharedStr {
    fn from(s: String) -> Self {
        SharedStr::new(&s)
    }
}

impl From<&String> for SharedStr {
    fn from(s: &String) -> Self {
        SharedStr::new(s)
    }
}

impl From<&SharedStr> for SharedStr {
    fn from(s: &SharedStr) -> Self {
        s.clone()
    }
}

impl From<SharedStr> for String {
    fn from(s: SharedStr) -> String {
        s.0.to_string()
    }
}

impl From<&SharedStr> for String {
    fn from(s: &SharedStr) -> String {
        s.0.to_string()
    }
}

impl PartialEq<str> for SharedStr {
    fn eq(&self, other: &str) -> bool {
        &*self.0 == other
    }
}

impl PartialEq<&str> for SharedStr {
    fn eq(&self, other: &&str) -> bool {
        &*self.0 == *other
    }
}

impl PartialEq<String> for SharedStr {
    fn eq(&self, other: &String) -> bool {
        *self.0 == **other
    }
}

impl PartialEq<SharedStr> for String {
    fn eq(&self, other: &SharedStr) -> bool {
        **self == *other.0
    }
}

impl PartialEq<SharedStr> for str {
    fn eq(&self, other: &SharedStr) -> bool {
        *self == *other.0
    }
}

impl PartialEq<SharedStr> for &str {
    fn eq(&self, other: &SharedStr) -> bool {
        **self == *other.0
    }
}

impl serde::Serialize for SharedStr {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_copy_reads_and_compares_as_a_string() {
        let a = SharedStr::new("tenant-a");
        let b = SharedStr::from("tenant-a".to_string());
        assert!(
            Arc::ptr_eq(&a.0, &b.0),
            "the same namespace is one allocation"
        );
        assert_eq!(a, "tenant-a");
        assert_eq!("tenant-a".to_string(), a);
        assert_eq!(a.as_str(), "tenant-a");
        assert_eq!(format!("{a}/{a:?}"), "tenant-a/\"tenant-a\"");
        assert_eq!(String::from(a.clone()), "tenant-a");
        assert!(SharedStr::default().is_empty());
    }
}
