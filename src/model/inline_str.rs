//! A short string held inside its owner instead of behind a pointer: an object's uid (36
//! bytes) and resourceVersion (a number's digits) are on every one of 20k objects, and as a
//! `String` each costs its 24 bytes plus an allocation of its own (72 and 56 bytes for a uid
//! and a version, glibc's chunk overhead included). Inline they cost 40 and 24 bytes. A value
//! longer than the inline room (the API does not promise a uid's shape) is kept whole on the
//! heap: never cut.

use std::borrow::Borrow;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Deref;

#[derive(Clone)]
pub enum InlineStr<const N: usize> {
    Inline { len: u8, bytes: [u8; N] },
    Heap(Box<str>),
}

/// An object's uid: a UUID's 36 characters fit.
pub type Uid = InlineStr<38>;
/// A resourceVersion: the digits of a 64-bit number fit.
pub type Version = InlineStr<22>;

impl<const N: usize> InlineStr<N> {
    pub fn new(s: &str) -> Self {
        match u8::try_from(s.len()) {
            Ok(len) if s.len() <= N => {
                let mut bytes = [0; N];
                bytes[..s.len()].copy_from_slice(s.as_bytes());
                InlineStr::Inline { len, bytes }
            }
            _ => InlineStr::Heap(s.into()),
        }
    }

    pub fn as_str(&self) -> &str {
        match self {
            // Copied whole from a `&str` in `new`, so always UTF-8; the fallback is unreachable.
            InlineStr::Inline { len, bytes } => {
                std::str::from_utf8(&bytes[..usize::from(*len)]).unwrap_or_default()
            }
            InlineStr::Heap(s) => s,
        }
    }
}

impl<const N: usize> Default for InlineStr<N> {
    fn default() -> Self {
        InlineStr::Inline {
            len: 0,
            bytes: [0; N],
        }
    }
}

impl<const N: usize> Deref for InlineStr<N> {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl<const N: usize> AsRef<str> for InlineStr<N> {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl<const N: usize> Borrow<str> for InlineStr<N> {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl<const N: usize> From<&str> for InlineStr<N> {
    fn from(s: &str) -> Self {
        InlineStr::new(s)
    }
}

impl<const N: usize> From<String> for InlineStr<N> {
    fn from(s: String) -> Self {
        InlineStr::new(&s)
    }
}

impl<const N: usize> From<&String> for InlineStr<N> {
    fn from(s: &String) -> Self {
        InlineStr::new(s)
    }
}

impl<const N: usize> From<InlineStr<N>> for String {
    fn from(s: InlineStr<N>) -> String {
        s.as_str().to_owned()
    }
}

impl<const N: usize> PartialEq for InlineStr<N> {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl<const N: usize> Eq for InlineStr<N> {}

impl<const N: usize> PartialOrd for InlineStr<N> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl<const N: usize> Ord for InlineStr<N> {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.as_str().cmp(other.as_str())
    }
}

impl<const N: usize> Hash for InlineStr<N> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_str().hash(state)
    }
}

impl<const N: usize> PartialEq<str> for InlineStr<N> {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl<const N: usize> PartialEq<&str> for InlineStr<N> {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl<const N: usize> PartialEq<String> for InlineStr<N> {
    fn eq(&self, other: &String) -> bool {
        self.as_str() == other.as_str()
    }
}

impl<const N: usize> PartialEq<InlineStr<N>> for String {
    fn eq(&self, other: &InlineStr<N>) -> bool {
        self.as_str() == other.as_str()
    }
}

impl<const N: usize> PartialEq<InlineStr<N>> for str {
    fn eq(&self, other: &InlineStr<N>) -> bool {
        self == other.as_str()
    }
}

impl<const N: usize> PartialEq<InlineStr<N>> for &str {
    fn eq(&self, other: &InlineStr<N>) -> bool {
        *self == other.as_str()
    }
}

impl<const N: usize> fmt::Debug for InlineStr<N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl<const N: usize> fmt::Display for InlineStr<N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self.as_str(), f)
    }
}

impl<const N: usize> serde::Serialize for InlineStr<N> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_uid_is_held_inline_and_reads_back_whole() {
        let uid = "0d3c9a4e-6f1b-4c2a-9e8d-7b5a3c1f2e4d";
        let held = Uid::new(uid);
        assert!(matches!(held, InlineStr::Inline { .. }));
        assert_eq!(held, uid);
        assert_eq!(held.len(), 36);
        assert_eq!(std::mem::size_of::<Uid>(), 40);
        assert_eq!(std::mem::size_of::<Version>(), 24);
    }

    #[test]
    fn a_value_longer_than_the_room_is_kept_whole_not_cut() {
        let long = "x".repeat(300);
        let held = Version::new(&long);
        assert!(matches!(held, InlineStr::Heap(_)));
        assert_eq!(held.as_str(), long);
        let multibyte = "é".repeat(11); // 22 bytes: fits exactly
        assert_eq!(Version::new(&multibyte), multibyte.as_str());
        let over = "é".repeat(12);
        assert_eq!(Version::new(&over).as_str(), over);
    }

    #[test]
    fn compares_and_orders_as_its_text() {
        assert!(Version::new("10") < Version::new("9"));
        assert_eq!(Version::new(""), Version::default());
        assert_ne!(Uid::new("a"), Uid::new("b"));
        let long_a = Uid::new(&"a".repeat(50));
        assert_eq!(long_a, Uid::new(&"a".repeat(50)));
    }
}
