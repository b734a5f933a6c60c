//! [`Registry`]: downstream components the program can name on its command line.
//!
//! The built-in components are typed kinds ([`CostKind`], [`SearchKind`], [`ExplainerKind`]).
//! A crate that writes its own cost model, search or explainer registers it here under a
//! name and runs the program through [`main_with`](crate::main_with); `--fusion`, `--search`
//! and `--explainer` then accept that name beside the built-in ones. A name is first read as
//! a built-in kind, so a registered name cannot shadow one.
//!
//! ```no_run
//! use fuselage::cost::{CostConfig, CostModel, Lbdf};
//! use fuselage_cli::Registry;
//! let registry = Registry::default().with_cost_model(
//!     "lbdf-twice",
//!     "LBDF with half the buffer",
//!     |cfg: CostConfig| -> Box<dyn CostModel> {
//!         Box::new(Lbdf::new(CostConfig::new((cfg.buffer_bytes() / 2).max(1)).unwrap()))
//!     },
//! );
//! std::process::exit(match fuselage_cli::main_with(&registry) {
//!     std::process::ExitCode::SUCCESS => 0,
//!     _ => 1,
//! });
//! ```

use anyhow::{Result, anyhow};
use fuselage::cost::{CostConfig, CostFamily, CostKind, CostModel, FnFamily};
use fuselage::explain::{Explainer, ExplainerKind};
use fuselage::pipeline::{ExplainerRequest, PipelineError};
use fuselage::search::{SearchKind, SearchStrategy};
use std::fmt::Display;
use std::str::FromStr;
use std::sync::Arc;

/// A registered cost model: its family (the model at any configuration).
pub type CostFamilyRef = Arc<dyn CostFamily>;
/// Makes a search strategy.
pub type SearchFactory = Arc<dyn Fn() -> Box<dyn SearchStrategy> + Send + Sync>;
/// Makes an explainer for a pipeline (it may read the pipeline's cost model).
pub type ExplainerFactoryFn = Arc<
    dyn Fn(&ExplainerRequest<'_>) -> std::result::Result<Box<dyn Explainer>, PipelineError>
        + Send
        + Sync,
>;

/// One registered component: its name, a line of help, and its factory.
#[derive(Clone)]
pub struct Entry<F> {
    /// The name the command line uses.
    pub name: String,
    /// One line saying what it is.
    pub about: String,
    /// Its factory.
    pub make: F,
}

/// A component the command line named: a built-in kind or a registered one.
pub enum Choice<'r, K, F> {
    /// A built-in.
    Kind(K),
    /// A registered downstream component.
    Custom(&'r Entry<F>),
}

/// Downstream components the program can name. [`Registry::default`] has none: the program
/// then offers the built-ins alone.
#[derive(Clone, Default)]
pub struct Registry {
    cost_models: Vec<Entry<CostFamilyRef>>,
    searches: Vec<Entry<SearchFactory>>,
    explainers: Vec<Entry<ExplainerFactoryFn>>,
}

impl Registry {
    /// Adds a cost model that `--fusion NAME` selects, made at a configuration by `make`.
    pub fn with_cost_model(
        self,
        name: &str,
        about: &str,
        make: impl Fn(CostConfig) -> Box<dyn CostModel> + Send + Sync + 'static,
    ) -> Self {
        let family = FnFamily::new(name, move |config: &CostConfig| make(*config));
        self.with_cost_family(about, family)
    }

    /// Adds a cost family that `--fusion NAME` selects, under its own name: every command
    /// that takes a cost model takes it, `sweep` and the report's sweep included.
    pub fn with_cost_family(mut self, about: &str, family: impl CostFamily + 'static) -> Self {
        let name = family.name().to_string();
        self.cost_models.push(entry(&name, about, Arc::new(family)));
        self
    }

    /// Adds a search that `--search NAME` selects.
    pub fn with_search(
        mut self,
        name: &str,
        about: &str,
        make: impl Fn() -> Box<dyn SearchStrategy> + Send + Sync + 'static,
    ) -> Self {
        self.searches.push(entry(name, about, Arc::new(make)));
        self
    }

    /// Adds an explainer that `--explainer NAME` selects.
    pub fn with_explainer(
        mut self,
        name: &str,
        about: &str,
        make: impl Fn(&ExplainerRequest<'_>) -> std::result::Result<Box<dyn Explainer>, PipelineError>
        + Send
        + Sync
        + 'static,
    ) -> Self {
        self.explainers.push(entry(name, about, Arc::new(make)));
        self
    }

    /// The cost model called `name`.
    ///
    /// # Errors
    /// When it is neither a built-in nor registered; the message lists both.
    pub fn cost_model(&self, name: &str) -> Result<Choice<'_, CostKind, CostFamilyRef>> {
        choose(name, &self.cost_models)
    }

    /// The cost family called `name`: a built-in kind or a registered family.
    ///
    /// # Errors
    /// As [`cost_model`](Self::cost_model).
    pub fn cost_family(&self, name: &str) -> Result<CostFamilyRef> {
        Ok(match self.cost_model(name)? {
            Choice::Kind(kind) => Arc::new(kind),
            Choice::Custom(entry) => entry.make.clone(),
        })
    }

    /// The search called `name`.
    ///
    /// # Errors
    /// As [`cost_model`](Self::cost_model).
    pub fn search(&self, name: &str) -> Result<Choice<'_, SearchKind, SearchFactory>> {
        choose(name, &self.searches)
    }

    /// The explainer called `name`.
    ///
    /// # Errors
    /// As [`cost_model`](Self::cost_model).
    pub fn explainer(&self, name: &str) -> Result<Choice<'_, ExplainerKind, ExplainerFactoryFn>> {
        choose(name, &self.explainers)
    }

    /// The registered components, one line each (`kind name: about`), for `--help`-like lists.
    pub fn describe(&self) -> Vec<String> {
        let mut out = describe("cost model", &self.cost_models);
        out.extend(describe("search", &self.searches));
        out.extend(describe("explainer", &self.explainers));
        out
    }
}

fn describe<F>(kind: &str, entries: &[Entry<F>]) -> Vec<String> {
    entries
        .iter()
        .map(|e| format!("{kind} {}: {}", e.name, e.about))
        .collect()
}

fn entry<F>(name: &str, about: &str, make: F) -> Entry<F> {
    Entry {
        name: name.to_string(),
        about: about.to_string(),
        make,
    }
}

fn choose<'r, K, F>(name: &str, custom: &'r [Entry<F>]) -> Result<Choice<'r, K, F>>
where
    K: FromStr,
    K::Err: Display,
{
    match name.parse::<K>() {
        Ok(k) => Ok(Choice::Kind(k)),
        Err(e) => match custom.iter().find(|c| c.name == name) {
            Some(c) => Ok(Choice::Custom(c)),
            None if custom.is_empty() => Err(anyhow!("{e}")),
            None => {
                let names: Vec<&str> = custom.iter().map(|c| c.name.as_str()).collect();
                Err(anyhow!("{e}; registered: {}", names.join(", ")))
            }
        },
    }
}
