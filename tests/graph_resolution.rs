//! Reference resolution on small multi-language repositories: each case names a reference
//! (`path:line name`) and what it must resolve to, with which provenance. Hand-checked
//! cross-module cases: imports and re-exports, renames, globs, receivers, bases, typed locals,
//! and what must stay unresolved or ambiguous.

mod support;

use kenning::graph::{CodeGraph, GraphQuery, Lookup};
use kenning::index::{IndexConfig, IndexSnapshot};
use support::{build, index_dir, materialize};

fn graph_of(spec: &str) -> (tempfile::TempDir, CodeGraph) {
    let repo = materialize(spec);
    let config = IndexConfig::default();
    build(repo.path(), &config);
    let snap = IndexSnapshot::open(&index_dir(repo.path(), &config)).expect("open");
    let g = snap.graph().expect("graph");
    (repo, g)
}

/// What the reference `path:line name` resolved to: `qualified [provenance]` per target,
/// `unresolved`/`external`, and `(of N)` when candidates were counted.
fn resolved(g: &CodeGraph, site: &str) -> String {
    let (loc, name) = site.split_once(' ').expect("`path:line name`");
    let (path, line) = loc.rsplit_once(':').expect("path:line");
    let line: u32 = line.parse().expect("line");
    let fi = g
        .files
        .iter()
        .position(|f| f.path.as_str() == path)
        .unwrap_or_else(|| panic!("no file {path}"));
    let f = &g.files[fi];
    let ri = f
        .refs
        .iter()
        .position(|r| r.line == line && r.name == name)
        .unwrap_or_else(|| {
            panic!(
                "no reference {name} at {loc}; refs: {:?}",
                f.refs.iter().map(|r| (r.line, &r.name)).collect::<Vec<_>>()
            )
        });
    let r = &g.resolved[fi].refs[ri];
    match r.provenance {
        None if r.external => "external".to_string(),
        None => "unresolved".to_string(),
        Some(p) => {
            let mut targets: Vec<String> = r
                .targets
                .iter()
                .map(|t| g.files[t.file.index()].qualified(t.def))
                .collect();
            targets.sort();
            targets.dedup();
            let of = if r.candidates > 1 {
                format!(" (of {})", r.candidates)
            } else {
                String::new()
            };
            format!("{} [{p}]{of}", targets.join(", "))
        }
    }
}

fn check(spec: &str, cases: &[(&str, &str)]) {
    let (_repo, g) = graph_of(spec);
    let mut failures = Vec::new();
    for (site, want) in cases {
        let got = resolved(&g, site);
        if got != *want {
            failures.push(format!("{site}: want {want:?}, got {got:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn python_imports_reexports_receivers_and_bases() {
    check(
        r#"
//- pkg/__init__.py
from .models import Request
from . import base
//- pkg/base.py
class Base:
    def prepare(self):
        return self.check()
    def check(self):
        return True
//- pkg/models.py
from .base import Base
import os.path as osp

class Request(Base):
    def send(self, session: "Session"):
        self.prepare()
        super().check()
        return osp.join("a", "b")

def make() -> Request:
    return Request()
//- app.py
import pkg
import pkg.models as m
from pkg import Request
from pkg.models import make as build

def main():
    r = Request()
    r.send(None)
    m.make().send(None)
    built = build()
    built.prepare()
    pkg.base.Base().check()
    print(len([]))
    with Request() as req:
        req.send(None)
"#,
        &[
            ("pkg/base.py:3 check", "pkg.base.Base.check [receiver]"),
            ("pkg/models.py:4 Base", "pkg.base.Base [import]"),
            ("pkg/models.py:6 prepare", "pkg.base.Base.prepare [receiver]"),
            ("pkg/models.py:7 check", "pkg.base.Base.check [receiver]"),
            ("pkg/models.py:8 join", "external"),
            ("pkg/models.py:11 Request", "pkg.models.Request [scope]"),
            ("app.py:7 Request", "pkg.models.Request [import]"),
            ("app.py:8 send", "pkg.models.Request.send [receiver]"),
            ("app.py:9 make", "pkg.models.make [import]"),
            ("app.py:9 send", "pkg.models.Request.send [receiver]"),
            ("app.py:10 build", "pkg.models.make [import]"),
            ("app.py:11 prepare", "pkg.base.Base.prepare [receiver]"),
            ("app.py:12 check", "pkg.base.Base.check [receiver]"),
            ("app.py:13 print", "external"),
            ("app.py:13 len", "external"),
            ("app.py:15 send", "pkg.models.Request.send [receiver]"),
        ],
    );
}

#[test]
fn python_unknown_receivers_are_name_matched_and_ambiguity_is_kept() {
    check(
        r#"
//- a.py
class File:
    def close(self):
        pass
    def flush(self):
        pass
//- b.py
class Socket:
    def close(self):
        pass
//- c.py
def use(x):
    x.close()
    x.flush()
    x.missing()
    undefined_function()
"#,
        &[
            (
                "c.py:2 close",
                "a.File.close, b.Socket.close [name-ambiguous] (of 2)",
            ),
            ("c.py:3 flush", "a.File.flush [name-unique]"),
            ("c.py:4 missing", "unresolved"),
            ("c.py:5 undefined_function", "external"),
        ],
    );
}

#[test]
fn rust_use_trees_renames_globs_paths_and_impls() {
    check(
        r#"
//- Cargo.toml
[package]
name = "demo"
//- src/lib.rs
mod a;
mod b;
pub use a::Thing as Renamed;

pub fn top() {
    a::helper();
    b::run();
    let t = Renamed::new();
    t.go();
}
//- src/a.rs
pub struct Thing;

impl Thing {
    pub fn new() -> Self {
        Thing
    }
    pub fn go(&self) {
        self.inner();
        Self::assoc();
    }
    fn inner(&self) {}
    fn assoc() {}
}

pub fn helper() {}

pub fn format() {}
//- src/b.rs
use crate::a::{helper as h, Thing};
use super::a::*;

pub fn run() {
    h();
    let t: Thing = Thing::new();
    t.go();
    crate::a::helper();
    let s = format!("{}", 1);
    format();
    Vec::<u8>::new();
    assert_eq!(helper(), ());
}
"#,
        &[
            ("src/lib.rs:6 helper", "demo::a::helper [qualified]"),
            ("src/lib.rs:7 run", "demo::b::run [qualified]"),
            ("src/lib.rs:8 new", "demo::a::Thing::new [import]"),
            ("src/lib.rs:9 go", "demo::a::Thing::go [receiver]"),
            ("src/a.rs:8 inner", "demo::a::Thing::inner [receiver]"),
            ("src/a.rs:9 assoc", "demo::a::Thing::assoc [receiver]"),
            ("src/b.rs:5 h", "demo::a::helper [import]"),
            ("src/b.rs:6 new", "demo::a::Thing::new [import]"),
            ("src/b.rs:7 go", "demo::a::Thing::go [receiver]"),
            ("src/b.rs:8 helper", "demo::a::helper [qualified]"),
            ("src/b.rs:9 format", "external"),
            ("src/b.rs:10 format", "demo::a::format [import]"),
            ("src/b.rs:11 new", "external"),
            ("src/b.rs:12 helper", "demo::a::helper [import]"),
        ],
    );
}

#[test]
fn typescript_named_namespace_and_default_imports() {
    check(
        r#"
//- src/store.ts
export class Store {
  get(id: string): string { return this.key(id); }
  key(id: string): string { return id; }
}
export function makeStore(): Store { return new Store(); }
//- src/util/index.ts
export function slug(s: string): string { return s; }
//- src/app.ts
import { Store, makeStore as mk } from './store';
import * as util from './util';
import defaultThing from './store';
import express from 'express';

function main(s: Store) {
  s.get("a");
  const t = new Store();
  t.key("b");
  mk();
  util.slug("x");
  defaultThing();
  express();
}
"#,
        &[
            ("src/store.ts:2 key", "src/store.Store.key [receiver]"),
            ("src/store.ts:5 Store", "src/store.Store [scope]"),
            ("src/app.ts:7 get", "src/store.Store.get [receiver]"),
            ("src/app.ts:8 Store", "src/store.Store [import]"),
            ("src/app.ts:9 key", "src/store.Store.key [receiver]"),
            ("src/app.ts:10 mk", "src/store.makeStore [import]"),
            ("src/app.ts:11 slug", "src/util.slug [import]"),
            ("src/app.ts:12 defaultThing", "unresolved"),
            ("src/app.ts:13 express", "external"),
        ],
    );
}

#[test]
fn go_packages_and_receivers() {
    check(
        r#"
//- go.mod
module example.com/app
//- server/server.go
package server

type Server struct{}

func New() *Server { return &Server{} }

func (s *Server) Start() error { return s.listen() }
//- server/listen.go
package server

func (s *Server) listen() error { return nil }
//- main.go
package main

import "example.com/app/server"

func main() {
	s := server.New()
	s.Start()
	srv := &server.Server{}
	srv.Start()
}
"#,
        &[
            (
                "server/server.go:7 listen",
                "example.com/app/server.Server.listen [receiver]",
            ),
            ("main.go:6 New", "example.com/app/server.New [import]"),
            (
                "main.go:7 Start",
                "example.com/app/server.Server.Start [receiver]",
            ),
            (
                "main.go:9 Start",
                "example.com/app/server.Server.Start [receiver]",
            ),
        ],
    );
}

#[test]
fn java_imports_same_package_and_typed_locals() {
    check(
        r#"
//- src/com/acme/Repo.java
package com.acme;

public class Repo {
    public void save() { this.flush(); }
    void flush() {}
}
//- src/com/acme/Service.java
package com.acme;

public class Service {
    void run() {
        Repo r = new Repo();
        r.save();
        flush();
    }
    void flush() {}
}
//- src/com/other/Main.java
package com.other;

import com.acme.Repo;

public class Main {
    void main() {
        var r = new Repo();
        r.save();
        String.valueOf(1);
    }
}
"#,
        &[
            ("src/com/acme/Repo.java:4 flush", "com.acme.Repo.flush [receiver]"),
            ("src/com/acme/Service.java:5 Repo", "com.acme.Repo [scope]"),
            (
                "src/com/acme/Service.java:6 save",
                "com.acme.Repo.save [receiver]",
            ),
            (
                "src/com/acme/Service.java:7 flush",
                "com.acme.Service.flush [scope]",
            ),
            ("src/com/other/Main.java:7 Repo", "com.acme.Repo [import]"),
            ("src/com/other/Main.java:8 save", "com.acme.Repo.save [receiver]"),
            ("src/com/other/Main.java:9 valueOf", "external"),
        ],
    );
}

#[test]
fn c_includes() {
    check(
        r#"
//- include/buf.h
int buf_len(int x);
//- src/buf.c
#include "../include/buf.h"
int buf_len(int x) { return x; }
//- src/main.c
#include "buf.h"
int main(void) { return buf_len(3) + helper(); }
//- src/helper.c
int helper(void) { return 1; }
"#,
        &[
            ("src/main.c:2 buf_len", "buf_len [name-unique]"),
            ("src/main.c:2 helper", "helper [name-unique]"),
        ],
    );
}

#[test]
fn cycles_self_imports_and_missing_modules_terminate() {
    check(
        r#"
//- pkg/__init__.py
from .a import thing
//- pkg/a.py
from .b import thing
from . import a
//- pkg/b.py
from .a import thing
from .missing import gone
import pkg.nowhere as nw

def f():
    thing()
    gone()
    nw.call()
//- pkg/c.py
from pkg import thing
thing()
"#,
        &[
            ("pkg/b.py:6 thing", "unresolved"),
            ("pkg/b.py:7 gone", "unresolved"),
            ("pkg/b.py:8 call", "unresolved"),
            ("pkg/c.py:2 thing", "unresolved"),
        ],
    );
}

#[test]
fn addresses_find_symbols_by_qualified_name_path_line_and_plain_name() {
    let (_repo, g) = graph_of(
        r#"
//- pkg/__init__.py
//- pkg/a.py
class A:
    def run(self):
        pass
//- pkg/b.py
class B:
    def run(self):
        pass
"#,
    );
    let q = GraphQuery::new(&g);
    let name = |l: Lookup| match l {
        Lookup::Found(s) => q.info(s).qualified,
        Lookup::Ambiguous(v) => format!("ambiguous {}", v.len()),
        Lookup::NotFound => "not found".into(),
    };
    assert_eq!(name(q.find("pkg.a.A.run")), "pkg.a.A.run");
    assert_eq!(name(q.find("A.run")), "pkg.a.A.run");
    assert_eq!(name(q.find("A::run")), "pkg.a.A.run");
    assert_eq!(name(q.find("pkg/b.py:3")), "pkg.b.B.run");
    assert_eq!(name(q.find("pkg/b.py:1")), "pkg.b.B");
    assert_eq!(name(q.find("run")), "ambiguous 2");
    assert_eq!(name(q.find("nothing")), "not found");
    assert_eq!(name(q.find("pkg/none.py:1")), "not found");
}

#[test]
fn page_rank_favours_what_is_used_and_personalization_follows_the_seeds() {
    use kenning::graph::{Node, SymbolId};
    let (_repo, g) = graph_of(
        r#"
//- core.py
def shared():
    pass
def unused():
    pass
//- a.py
from core import shared
def a1():
    shared()
def a2():
    shared()
    a1()
//- b.py
from core import shared
def b1():
    shared()
def b2():
    b1()
"#,
    );
    let q = GraphQuery::new(&g);
    let id = |name: &str| match q.find(name) {
        Lookup::Found(s) => s,
        other => panic!("{name}: {other:?}"),
    };
    let (shared, unused, a1, b1) = (id("core.shared"), id("core.unused"), id("a.a1"), id("b.b1"));
    assert!(
        g.rank_of(shared) > g.rank_of(a1),
        "the most called function ranks first"
    );
    assert!(
        g.rank_of(a1) > g.rank_of(unused),
        "a called function ranks above an unused one"
    );
    let total: f32 = g.rank.iter().flatten().sum();
    assert!(
        total > 0.0 && total <= 1.0 + 1e-3,
        "symbol ranks are a share of the whole: {total}"
    );

    // Seeded at a2, its neighbourhood (a1) outranks the other file's b1; seeded at b2, the
    // opposite.
    let rank = |seed: SymbolId, s: SymbolId| {
        let r = q.sg.personalized_rank(&[(Node::Symbol(seed), 1.0)]);
        r[q.sg.symbol_node(s).index()]
    };
    let (a2, b2) = (id("a.a2"), id("b.b2"));
    assert!(rank(a2, a1) > rank(a2, b1));
    assert!(rank(b2, b1) > rank(b2, a1));
}

#[test]
fn ruby_requires_nested_constants_implicit_self_and_one_name_space_per_language() {
    check(
        r#"
//- lib/shop/cart.rb
require_relative "item"
module Shop
  class Cart
    def add(item)
      total(item)
      Item.build(item)
    end
    def total(item)
      item
    end
  end
end
//- lib/shop/item.rb
module Shop
  class Item
    def self.build(x)
      x
    end
  end
end
//- bin/run.rb
require "shop/cart"
Shop::Item.build(1)
File.read("x")
obj.frobnicate
//- tools/x.lua
function frobnicate() end
"#,
        &[
            ("lib/shop/cart.rb:5 total", "Shop.Cart.total [scope]"),
            ("lib/shop/cart.rb:6 build", "Shop.Item.build [qualified]"),
            ("bin/run.rb:2 build", "Shop.Item.build [qualified]"),
            ("bin/run.rb:3 read", "external"),
            ("bin/run.rb:4 frobnicate", "unresolved"),
        ],
    );
}

#[test]
fn lua_require_binds_the_module_table_and_globals_are_shared() {
    check(
        r#"
//- src/util/strings.lua
local M = {}
function M.trim(s) return s end
return M
//- src/app.lua
local strings = require("util.strings")
local function main()
  return strings.trim(" x ")
end
shout("x")
//- src/globals.lua
function shout(s) return s end
"#,
        &[
            ("src/app.lua:3 trim", "M.trim [import]"),
            ("src/app.lua:5 shout", "shout [scope]"),
        ],
    );
}

#[test]
fn zig_imports_name_files_and_packages_stay_external() {
    check(
        r#"
//- src/ring.zig
pub const Ring = struct {
    pub fn init() Ring {
        return .{};
    }
};
pub fn helper() void {}
//- src/main.zig
const std = @import("std");
const ring = @import("ring.zig");
const Ring = @import("ring.zig").Ring;
pub fn main() void {
    _ = Ring.init();
    ring.helper();
    std.debug.print("x", .{});
}
"#,
        &[
            ("src/main.zig:5 init", "Ring.init [import]"),
            ("src/main.zig:6 helper", "helper [import]"),
            ("src/main.zig:7 print", "external"),
        ],
    );
}

#[test]
fn bash_source_makes_the_sourced_functions_callable() {
    check(
        r#"
//- lib/log.sh
log_info() { echo "$1"; }
//- bin/run.sh
source "$(dirname "$0")/../lib/log.sh"
log_info "hi"
"#,
        &[("bin/run.sh:2 log_info", "log_info [import]")],
    );
}

#[test]
fn elixir_alias_import_and_full_module_names() {
    check(
        r#"
//- lib/shop/inventory.ex
defmodule Shop.Inventory do
  def available(sku), do: lookup(sku)
  defp lookup(sku), do: sku
end
//- lib/shop/cart.ex
defmodule Shop.Cart do
  alias Shop.Inventory
  import Shop.Pricing
  def add(sku) do
    Inventory.available(sku)
    Shop.Inventory.available(sku)
    price(sku)
    Enum.map([], fn x -> x end)
  end
end
//- lib/shop/pricing.ex
defmodule Shop.Pricing do
  def price(sku), do: sku
end
"#,
        &[
            ("lib/shop/inventory.ex:2 lookup", "Shop.Inventory.lookup [scope]"),
            (
                "lib/shop/cart.ex:5 available",
                "Shop.Inventory.available [import]",
            ),
            (
                "lib/shop/cart.ex:6 available",
                "Shop.Inventory.available [qualified]",
            ),
            ("lib/shop/cart.ex:7 price", "Shop.Pricing.price [import]"),
            ("lib/shop/cart.ex:8 map", "external"),
        ],
    );
}

#[test]
fn haskell_imports_name_declared_modules() {
    check(
        r#"
//- src/Data/Shop/Types.hs
module Data.Shop.Types where

price :: Int -> Int
price n = n
//- src/Data/Shop.hs
module Data.Shop (total) where

import Data.Shop.Types
import qualified Data.Map as M

total :: Int -> Int
total x = price x + M.size M.empty
"#,
        &[
            ("src/Data/Shop.hs:7 price", "Data.Shop.Types.price [import]"),
            ("src/Data/Shop.hs:7 size", "external"),
        ],
    );
}

#[test]
fn swift_names_are_module_wide_and_methods_call_siblings_without_self() {
    check(
        r#"
//- Sources/Shop/Cart.swift
struct Cart {
    func add() {
        total()
        Pricing.price()
    }
    func total() {}
}
//- Sources/Shop/Pricing.swift
enum Pricing {
    static func price() {}
}
"#,
        &[
            ("Sources/Shop/Cart.swift:3 total", "Cart.total [scope]"),
            ("Sources/Shop/Cart.swift:4 price", "Pricing.price [qualified]"),
        ],
    );
}

/// A mixin's calls on `self` that the mixin does not define reach the methods of the classes
/// that include or inherit it: Ruby's implicit `self` in a module (`halt` in sinatra's
/// `Helpers`, included by `Base` reopened in another file), Python's `self.render()` in a
/// mixin class. Calls the including class does not define stay as they were.
#[test]
fn ruby_includes_and_python_mixins_resolve_self_calls_to_the_includer() {
    check(
        r#"
//- lib/base.rb
module Sinatra
  class Base
    def halt(*response)
      throw :halt, response
    end
  end
end
//- lib/helpers.rb
module Sinatra
  module Helpers
    def not_found(body = nil)
      halt 404, body
    end

    def redirect(uri)
      halt 302
      puts uri
    end
  end

  class Base
    include Helpers
  end
end
//- app/views.py
class RenderMixin:
    def show(self):
        return self.render("x")


class Page(RenderMixin, object):
    def render(self, what):
        return what
"#,
        &[
            ("lib/helpers.rb:4 halt", "Sinatra.Base.halt [receiver]"),
            ("lib/helpers.rb:8 halt", "Sinatra.Base.halt [receiver]"),
            ("lib/helpers.rb:9 puts", "external"),
            ("app/views.py:3 render", "views.Page.render [receiver]"),
        ],
    );
}

/// A mixin included by more types than the walk reads (64): the includers read are the first
/// by id, so the resolution and what it depends on are the same in every build. They were the
/// first in a hash map's order, which changes from one map to the next: two builds of one tree
/// kept different targets and recorded different files.
#[test]
fn a_mixin_with_more_includers_than_the_walk_reads_resolves_the_same_in_every_build() {
    // 90 includers; only the last 30 define the method the mixin calls.
    let mut spec = String::from(
        "//- app/mixin.py\nclass RenderMixin:\n    def show(self):\n        return self.render()\n",
    );
    for i in 0..90 {
        let method = if i >= 60 { "render" } else { "other" };
        spec.push_str(&format!(
            "\n\nclass Page{i:02}(RenderMixin):\n    def {method}(self):\n        return {i}\n"
        ));
    }
    let builds: Vec<String> = (0..3)
        .map(|_| resolved(&graph_of(&spec).1, "app/mixin.py:3 render"))
        .collect();
    // The first 64 includers by id: pages 00 to 63, of which 60 to 63 define it.
    assert!(builds[0].starts_with("mixin.Page60.render"), "{}", builds[0]);
    assert!(builds[0].ends_with("(of 4)"), "{}", builds[0]);
    assert!(builds.iter().all(|b| b == &builds[0]), "{builds:#?}");
}

/// Two Haskell modules that re-export a name from each other (as haskell/cabal's do): the walk
/// through their imports ends at its depth limit; before, each declared import started the
/// walk again at depth 1 and the build died of a stack overflow.
#[test]
fn a_cycle_of_haskell_reexports_ends() {
    let (_dir, g) = graph_of(
        "//- src/A.hs\nmodule A (foo) where\nimport B (foo)\n\
         //- src/B.hs\nmodule B (foo) where\nimport A (foo)\n\
         //- src/C.hs\nmodule C where\nimport A (foo)\nmain = foo\n",
    );
    assert_eq!(g.files.len(), 3);
}
