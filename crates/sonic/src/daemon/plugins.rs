//! Vendor Lua headroom plugins (`--lua-plugins DIR`): SONiC's
//! `buffer_headroom_<vendor>.lua` loaded with `SCRIPT LOAD` and run with `EVALSHA` on an
//! APPL_DB connection, as buffermgrd does (sonic-buffer.md §1.5, §3), in place of the native
//! headroom model.
//!
//! Call contract: `KEYS[1]` = the profile name, `ARGV` = speed, cable, port MTU, gearbox
//! delay, lane count; the plugin `SELECT`s the databases it reads itself. It returns
//! `name:value` strings; `xon`, `xoff` and `size` are required (non-negative integers, Lua
//! numbers such as `1.9456e+04` accepted), `debug:` lines are logged at debug level, other
//! names are ignored.
//!
//! Invariants: a call that fails (Redis unreachable, a Lua error, a missing or malformed
//! value) is an `Err` naming the plugin, which the manager treats as "cannot be computed
//! yet" and retries; the connection is (re)established lazily, and a script flushed from
//! Redis's cache (e.g. by a restart) is reloaded on `NOSCRIPT`.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use crate::bufmgr::HeadroomPlugin;
use crate::model::Headroom;
use crate::swss::{Db, DbConnection, Endpoint, LuaPlugin, SwssError};

/// Errors loading a plugin directory.
#[derive(Debug, thiserror::Error)]
pub enum PluginError {
    /// The directory cannot be listed.
    #[error("cannot read plugin directory {dir}: {source}")]
    Dir {
        /// The directory.
        dir: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// Not exactly one `buffer_headroom_<vendor>.lua` in the directory.
    #[error("{dir}: expected exactly one buffer_headroom_<vendor>.lua, found {found}")]
    NotOne {
        /// The directory.
        dir: PathBuf,
        /// What was found (file names, or "none").
        found: String,
    },
    /// The file cannot be read, or Redis rejected the script (`SCRIPT LOAD`: syntax error).
    #[error(transparent)]
    Load(#[from] SwssError),
}

/// A Lua headroom plugin run in Redis (see the module docs).
#[derive(Debug)]
pub struct LuaHeadroom {
    endpoint: Endpoint,
    state: Mutex<(LuaPlugin, Option<DbConnection>)>,
}

impl LuaHeadroom {
    /// Reads the plugin file and, if Redis is reachable now, loads it (so a syntax error is
    /// reported at once; an unreachable server is not an error).
    pub fn load(endpoint: &Endpoint, path: &Path) -> Result<LuaHeadroom, PluginError> {
        let mut plugin = LuaPlugin::from_file(path)?;
        let conn = match DbConnection::open(endpoint, Db::Appl) {
            Ok(mut c) => {
                plugin.load(&mut c)?;
                Some(c)
            }
            Err(e) if e.is_connection_error() => None,
            Err(e) => return Err(e.into()),
        };
        Ok(LuaHeadroom {
            endpoint: endpoint.clone(),
            state: Mutex::new((plugin, conn)),
        })
    }

    /// Loads the single `buffer_headroom_<vendor>.lua` of `dir`.
    pub fn from_dir(endpoint: &Endpoint, dir: &Path) -> Result<LuaHeadroom, PluginError> {
        let entries = std::fs::read_dir(dir).map_err(|source| PluginError::Dir {
            dir: dir.to_owned(),
            source,
        })?;
        let mut found: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("buffer_headroom_") && n.ends_with(".lua"))
            })
            .collect();
        found.sort();
        match found.as_slice() {
            [one] => LuaHeadroom::load(endpoint, one),
            _ => Err(PluginError::NotOne {
                dir: dir.to_owned(),
                found: if found.is_empty() {
                    "none".to_owned()
                } else {
                    found
                        .iter()
                        .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
                        .collect::<Vec<_>>()
                        .join(", ")
                },
            }),
        }
    }

    /// The plugin name (file stem).
    pub fn name(&self) -> String {
        self.state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .0
            .name()
            .to_owned()
    }
}

impl HeadroomPlugin for LuaHeadroom {
    fn headroom(&self, profile: &str, argv: [&str; 5]) -> Result<Headroom, String> {
        let mut guard = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let (plugin, conn) = &mut *guard;
        let name = plugin.name().to_owned();
        if conn.is_none() {
            *conn = Some(
                DbConnection::open(&self.endpoint, Db::Appl)
                    .map_err(|e| format!("plugin {name}: {e}"))?,
            );
        }
        let Some(c) = conn.as_mut() else {
            return Err(format!("plugin {name}: no connection"));
        };
        let out = plugin
            .call(c, &[profile], &argv)
            .map_err(|e| format!("plugin {name}: {e}"))?;
        for d in &out.debug {
            tracing::debug!(target: "bufmgrd", plugin = %name, "{d}");
        }
        let field = |f: &str| -> Result<u64, String> {
            let v = out
                .value(f)
                .ok_or_else(|| format!("plugin {name}: no `{f}` in its output"))?;
            crate::lua::tonumber(v)
                .filter(|x| x.is_finite() && *x >= 0.0 && x.fract() == 0.0 && *x < 1e18)
                .map(|x| x as u64)
                .ok_or_else(|| format!("plugin {name}: `{f}` = {v:?} is not a byte count"))
        };
        Ok(Headroom {
            xon: field("xon")?,
            xoff: field("xoff")?,
            size: field("size")?,
            dsh: None,
        })
    }
}
