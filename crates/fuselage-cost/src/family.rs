//! [`CostFamily`]: a cost model at any buffer.
//!
//! A [`CostModel`] prices groups at one configuration (its β and element sizes). What varies
//! β (the buffer sweep), what labels groups at several buffers, and what a program selects
//! by name before it knows the buffer all need the model *as a function of* the
//! configuration: a family. [`CostKind`] is the family of each built-in model; a downstream
//! crate implements the trait for its own type, or wraps a closure in [`FnFamily`], and gets
//! the same sweep and report as the built-ins.

use crate::{CostConfig, CostKind, CostModel};

/// A cost model at any configuration: a name, and the model at a [`CostConfig`].
///
/// # Example
/// ```
/// use fuselage_cost::{CostConfig, CostFamily, CostKind, FnFamily, Lbdf};
/// let at = CostConfig::kib(128)?;
/// assert_eq!(CostKind::Brr.at(&at).name(), "brr");
/// let mine = FnFamily::new("mine", |c: &CostConfig| Box::new(Lbdf::new(*c)) as _);
/// assert_eq!((mine.name(), mine.at(&at).config().buffer_bytes()), ("mine", 131_072));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait CostFamily: Send + Sync {
    /// The family's name (the command line's `--fusion NAME`).
    fn name(&self) -> &str;
    /// The model at `config`.
    fn at(&self, config: &CostConfig) -> Box<dyn CostModel>;
}

impl CostFamily for CostKind {
    fn name(&self) -> &str {
        CostKind::name(*self)
    }

    fn at(&self, config: &CostConfig) -> Box<dyn CostModel> {
        self.model(*config)
    }
}

/// A family made of a name and a closure from a configuration to a model.
#[derive(Clone, Debug)]
pub struct FnFamily<F> {
    name: String,
    make: F,
}

impl<F> FnFamily<F>
where
    F: Fn(&CostConfig) -> Box<dyn CostModel> + Send + Sync,
{
    /// The family `name` whose model at a configuration `make` builds.
    pub fn new(name: &str, make: F) -> Self {
        FnFamily {
            name: name.to_string(),
            make,
        }
    }
}

impl<F> CostFamily for FnFamily<F>
where
    F: Fn(&CostConfig) -> Box<dyn CostModel> + Send + Sync,
{
    fn name(&self) -> &str {
        &self.name
    }

    fn at(&self, config: &CostConfig) -> Box<dyn CostModel> {
        (self.make)(config)
    }
}

impl<T: CostFamily + ?Sized> CostFamily for std::sync::Arc<T> {
    fn name(&self) -> &str {
        (**self).name()
    }

    fn at(&self, config: &CostConfig) -> Box<dyn CostModel> {
        (**self).at(config)
    }
}

impl<T: CostFamily + ?Sized> CostFamily for &T {
    fn name(&self) -> &str {
        (**self).name()
    }

    fn at(&self, config: &CostConfig) -> Box<dyn CostModel> {
        (**self).at(config)
    }
}
