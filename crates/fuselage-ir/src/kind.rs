//! Typed kinds: one closed enum per family of built-in components (cost models, searches,
//! splitters, explainers), each with one spelling.
//!
//! ## Design
//!
//! A component kind is chosen on a command line, recorded in a plan file or a checkpoint, and
//! matched on in a factory. Spelled as a string, each of those places parses it again and can
//! disagree with the others. [`kinds!`](crate::kinds) declares the enum once and gives it:
//!
//! - `ALL`, every kind in declaration order, and `name()`, its one canonical spelling;
//! - [`Display`](std::fmt::Display) (the canonical spelling) and
//!   [`FromStr`](std::str::FromStr) (the canonical spelling or an alias, else an
//!   [`UnknownKind`] that lists the valid names);
//! - serde as that same string, so files stay readable and old files keep loading.
//!
//! The crate that owns a family declares its enum (`fuselage_cost::CostKind`,
//! `fuselage_search::SearchKind`, ...); the macro lives here because every crate depends on
//! `fuselage-ir`. Kinds are closed on purpose: a downstream component is passed as a trait
//! object and named by its own `name()`, never squeezed into a kind.
//!
//! ```
//! fuselage_ir::kinds! {
//!     /// How a drink is served.
//!     pub enum Serve: "serving" {
//!         /// Over ice.
//!         Rocks = "rocks" | "ice",
//!         /// Without.
//!         Neat = "neat",
//!     }
//! }
//! assert_eq!("ice".parse::<Serve>()?, Serve::Rocks);
//! assert_eq!(Serve::Neat.to_string(), "neat");
//! assert_eq!(serde_json::to_string(&Serve::Rocks)?, "\"rocks\"");
//! let e = "shaken".parse::<Serve>().unwrap_err();
//! assert_eq!(e.to_string(), "unknown serving `shaken`; valid: rocks, neat");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

/// A name that is no kind of its family: what was asked for and what is valid.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown {family} `{given}`; valid: {}", valid.join(", "))]
pub struct UnknownKind {
    /// The family (`cost model`, `search`, ...).
    pub family: &'static str,
    /// The name given.
    pub given: String,
    /// The canonical names of the family.
    pub valid: &'static [&'static str],
}

/// Declares a closed enum of component kinds with one spelling each: `ALL`, `NAMES`,
/// `name()`, `Display`, `FromStr` (accepting aliases after `|`) and serde as the name. See the
/// [module docs](crate::kind).
#[macro_export]
macro_rules! kinds {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident : $family:literal {
            $(
                $(#[$vmeta:meta])*
                $variant:ident = $text:literal $(| $alias:literal)*
            ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        $vis enum $name {
            $( $(#[$vmeta])* $variant ),+
        }

        impl $name {
            /// Every kind, in declaration order.
            pub const ALL: [$name; [$($text),+].len()] = [$($name::$variant),+];
            /// The canonical names, aligned with `ALL`.
            pub const NAMES: [&'static str; [$($text),+].len()] = [$($text),+];

            /// The canonical name.
            pub fn name(self) -> &'static str {
                match self {
                    $($name::$variant => $text),+
                }
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.name())
            }
        }

        impl ::std::str::FromStr for $name {
            type Err = $crate::UnknownKind;

            fn from_str(s: &str) -> ::std::result::Result<Self, Self::Err> {
                match s {
                    $($text $(| $alias)* => Ok($name::$variant),)+
                    _ => Err($crate::UnknownKind {
                        family: $family,
                        given: s.to_string(),
                        valid: &$name::NAMES,
                    }),
                }
            }
        }

        impl $crate::__serde::Serialize for $name {
            fn serialize<S: $crate::__serde::Serializer>(
                &self,
                serializer: S,
            ) -> ::std::result::Result<S::Ok, S::Error> {
                serializer.serialize_str(self.name())
            }
        }

        impl<'de> $crate::__serde::Deserialize<'de> for $name {
            fn deserialize<D: $crate::__serde::Deserializer<'de>>(
                deserializer: D,
            ) -> ::std::result::Result<Self, D::Error> {
                let text = <::std::string::String as $crate::__serde::Deserialize>::deserialize(
                    deserializer,
                )?;
                text.parse()
                    .map_err(<D::Error as $crate::__serde::de::Error>::custom)
            }
        }
    };
}

#[cfg(test)]
mod tests {
    crate::kinds! {
        /// A test family.
        enum Colour: "colour" {
            /// Red.
            Red = "red" | "r",
            /// Blue.
            Blue = "blue",
        }
    }

    #[test]
    fn every_name_and_alias_parses_and_round_trips() {
        for k in Colour::ALL {
            assert_eq!(k.name().parse::<Colour>(), Ok(k));
            let json = serde_json::to_string(&k).unwrap();
            assert_eq!(json, format!("\"{k}\""));
            assert_eq!(serde_json::from_str::<Colour>(&json).unwrap(), k);
        }
        assert_eq!("r".parse::<Colour>(), Ok(Colour::Red));
        assert_eq!(Colour::NAMES, ["red", "blue"]);
    }

    #[test]
    fn an_unknown_name_lists_the_valid_ones() {
        let e = "green".parse::<Colour>().unwrap_err();
        assert_eq!(e.to_string(), "unknown colour `green`; valid: red, blue");
        let j = serde_json::from_str::<Colour>("\"Red\"").unwrap_err();
        assert!(j.to_string().contains("unknown colour `Red`"), "{j}");
    }
}
