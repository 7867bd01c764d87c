//! Lua plugins run inside Redis (buffermgrd's vendor plugins, §1.5 of the spec).
//!
//! A plugin is loaded with `SCRIPT LOAD` and run with `EVALSHA` on the APPL_DB connection;
//! it `SELECT`s the databases it reads itself. It returns an array of strings
//! `"<name>:<value>[:<value>…]"`; lines starting with `debug:` are diagnostics.
//!
//! Invariants:
//! - A call costs 1 round trip; 2 if the server lost its script cache (restart,
//!   `SCRIPT FLUSH`): the `NOSCRIPT` reply triggers a pipelined `SCRIPT LOAD` + `EVALSHA`.
//!   The first call after [`LuaPlugin::new`] pipelines the load with the call (1 round trip);
//!   [`LuaPlugin::load`] loads eagerly (1 round trip) so that a syntax error shows at start-up.
//! - Parsing never fails: a line is split at every `:`; the first part is the name, the
//!   rest are the values (a line without `:` is a name with no values).

use std::path::Path;

use redis::Value;

use super::conn::DbConnection;
use super::error::{Result, SwssError};
use super::script::CachedScript;

/// One `name:value[:value…]` line of a plugin's output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginEntry {
    /// The part before the first `:`.
    pub name: String,
    /// The `:`-separated parts after it (possibly empty strings).
    pub values: Vec<String>,
}

impl PluginEntry {
    /// The first value, if any.
    pub fn value(&self) -> Option<&str> {
        self.values.first().map(String::as_str)
    }
}

/// A plugin's parsed output.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PluginOutput {
    /// The non-debug lines, in returned order.
    pub entries: Vec<PluginEntry>,
    /// The text after `debug:` of each debug line, in returned order.
    pub debug: Vec<String>,
}

impl PluginOutput {
    /// Parses plugin output lines (see the module invariants).
    pub fn parse<S: AsRef<str>>(lines: &[S]) -> PluginOutput {
        let mut out = PluginOutput::default();
        for line in lines {
            let line = line.as_ref();
            if let Some(rest) = line.strip_prefix("debug:") {
                out.debug.push(rest.to_owned());
                continue;
            }
            let mut parts = line.split(':');
            let name = parts.next().unwrap_or_default().to_owned();
            out.entries.push(PluginEntry {
                name,
                values: parts.map(str::to_owned).collect(),
            });
        }
        out
    }

    /// The first entry named `name`.
    pub fn get(&self, name: &str) -> Option<&PluginEntry> {
        self.entries.iter().find(|e| e.name == name)
    }

    /// The first value of the first entry named `name`.
    pub fn value(&self, name: &str) -> Option<&str> {
        self.get(name).and_then(PluginEntry::value)
    }
}

/// A named Lua plugin and its script-cache state.
#[derive(Debug, Clone)]
pub struct LuaPlugin {
    name: String,
    script: CachedScript,
}

impl LuaPlugin {
    /// A plugin named `name` with the given Lua source (nothing is sent yet).
    pub fn new(name: impl Into<String>, source: impl Into<String>) -> Self {
        LuaPlugin {
            name: name.into(),
            script: CachedScript::new(source),
        }
    }

    /// Reads a plugin file; its name is the file stem (`buffer_headroom_mellanox`).
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        let source = std::fs::read_to_string(path).map_err(|source| SwssError::PluginFile {
            path: path.to_owned(),
            source,
        })?;
        let name = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        Ok(LuaPlugin::new(name, source))
    }

    /// The plugin name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The Lua source.
    pub fn source(&self) -> &str {
        self.script.source()
    }

    /// Lowercase hex SHA1 of the source (the `EVALSHA` argument).
    pub fn sha(&self) -> &str {
        self.script.sha()
    }

    /// `SCRIPT LOAD` now (1 round trip); a Lua syntax error is reported here.
    pub fn load(&mut self, conn: &mut DbConnection) -> Result<()> {
        self.script.load(conn)
    }

    /// Runs the plugin and returns its raw output lines (see the module invariants for the
    /// round trips). A nil/false result is an empty list; a Lua runtime error is
    /// [`SwssError::Redis`]; any result other than an array of strings is
    /// [`SwssError::UnexpectedReply`].
    pub fn call_lines<K, A>(
        &mut self,
        conn: &mut DbConnection,
        keys: &[K],
        args: &[A],
    ) -> Result<Vec<String>>
    where
        K: AsRef<str>,
        A: AsRef<str>,
    {
        let keys: Vec<&str> = keys.iter().map(AsRef::as_ref).collect();
        let args: Vec<&str> = args.iter().map(AsRef::as_ref).collect();
        match self.script.invoke(conn, &keys, &args)? {
            Value::Nil => Ok(Vec::new()),
            v @ Value::Array(_) => {
                redis::from_owned_redis_value(v).map_err(|e| SwssError::UnexpectedReply {
                    op: "EVALSHA plugin",
                    detail: e.to_string(),
                })
            }
            other => Err(SwssError::UnexpectedReply {
                op: "EVALSHA plugin",
                detail: format!("{other:?}"),
            }),
        }
    }

    /// Runs the plugin and parses its output (see [`PluginOutput::parse`]).
    pub fn call<K, A>(
        &mut self,
        conn: &mut DbConnection,
        keys: &[K],
        args: &[A],
    ) -> Result<PluginOutput>
    where
        K: AsRef<str>,
        A: AsRef<str>,
    {
        Ok(PluginOutput::parse(&self.call_lines(conn, keys, args)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_name_value_lines() {
        let out = PluginOutput::parse(&[
            "xon:18432",
            "debug:speed 100000",
            "ingress_lossless_pool:1000:200",
            "result:true",
            "bare",
            "empty:",
        ]);
        assert_eq!(out.value("xon"), Some("18432"));
        assert_eq!(
            out.get("ingress_lossless_pool").map(|e| e.values.clone()),
            Some(vec!["1000".to_owned(), "200".to_owned()])
        );
        assert_eq!(out.value("result"), Some("true"));
        assert_eq!(out.get("bare").map(|e| e.values.len()), Some(0));
        assert_eq!(out.value("empty"), Some(""));
        assert_eq!(out.debug, vec!["speed 100000".to_owned()]);
        assert_eq!(out.entries.len(), 5);
    }
}
