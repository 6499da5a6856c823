"""The demo database: customers, products, orders (and stock levels), deterministic and dated
relative to the day it is built, so "last week's orders" always has an answer."""

from __future__ import annotations

import os
import random
import sqlite3
from datetime import date, datetime, time, timedelta
from pathlib import Path

from agent import paths

SEED = 20240501
STATUSES = ("pending", "shipped", "delivered", "cancelled")
WAREHOUSES = ("north", "south", "west")
_FIRST = (
    "Ada Alan Grace Linus Margaret Ken Barbara Dennis Frances Edsger Radia Tim Hedy Claude "
    "Katherine John Sophie Guido Anita Bjarne Lynn Niklaus Joan Donald Mary Rob Shafi Whitfield"
).split()
_LAST = (
    "Lovelace Turing Hopper Torvalds Hamilton Thompson Liskov Ritchie Allen Dijkstra Perlman "
    "Berners-Lee Lamarr Shannon Johnson McCarthy Wilson Rossum Borg Stroustrup Conway Wirth "
    "Clarke Knuth Keller Pike Goldwasser Diffie"
).split()
_CITIES = (
    "Lisbon Berlin Austin Osaka Nairobi Toronto Lyon Seoul Denver Oslo Porto Dublin Madrid "
    "Chicago Krakow Melbourne"
).split()
_CATEGORIES = {
    "books": ("Field Guide", "Cookbook", "Atlas", "Novel", "Notebook"),
    "garden": ("Trowel", "Watering Can", "Seed Kit", "Planter", "Hose"),
    "kitchen": ("Kettle", "Skillet", "Knife Set", "Teapot", "Grinder"),
    "office": ("Desk Lamp", "Stapler", "Monitor Arm", "Chair Mat", "Pen Set"),
    "outdoor": ("Tent", "Lantern", "Backpack", "Hammock", "Camp Stove"),
}
_ADJECTIVES = ("Classic", "Compact", "Deluxe", "Everyday", "Pro", "Travel", "Eco")

_SCHEMA = """
CREATE TABLE customers (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    email TEXT NOT NULL UNIQUE,
    city TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE TABLE products (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    category TEXT NOT NULL,
    price REAL NOT NULL,
    stock INTEGER NOT NULL
);
CREATE TABLE orders (
    id INTEGER PRIMARY KEY,
    customer_id INTEGER NOT NULL REFERENCES customers(id),
    product_id INTEGER NOT NULL REFERENCES products(id),
    quantity INTEGER NOT NULL,
    total REAL NOT NULL,
    status TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX orders_status ON orders(status);
CREATE INDEX orders_customer_id ON orders(customer_id);
CREATE TABLE stock_levels (
    warehouse TEXT NOT NULL,
    product_id INTEGER NOT NULL REFERENCES products(id),
    quantity INTEGER NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (warehouse, product_id)
) WITHOUT ROWID;
"""


def _stamp(day: date, rng: random.Random, latest: datetime | None = None) -> str:
    """A time between 08:00 and 22:00 of `day`; one after `latest` (later today, when the
    database is built now) moves to the day before, so no order is placed in the future."""
    moment = datetime.combine(day, time()) + timedelta(seconds=rng.randrange(8 * 3600, 22 * 3600))
    if latest is not None and moment > latest:
        moment -= timedelta(days=1)
    return moment.isoformat(timespec="seconds")


def build_demo_db(
    path: str | Path,
    *,
    customers: int = 240,
    products: int = 60,
    orders: int = 2000,
    today: date | None = None,
    now: datetime | None = None,
) -> Path:
    """Write a fresh demo database to `path` (replacing nothing: `path` must not exist), its
    dates up to `today` (the whole day) or else up to `now` (default: this moment)."""
    target = Path(path)
    latest: datetime | None = None  # a given day is built whole (tests pin one)
    day = today
    if day is None:
        latest = now or datetime.now()
        day = latest.date()
    rng = random.Random(SEED)
    conn = sqlite3.connect(target)
    try:
        conn.executescript(_SCHEMA)
        customer_rows = []
        for i in range(1, customers + 1):
            first, last = rng.choice(_FIRST), rng.choice(_LAST)
            customer_rows.append(
                (
                    i,
                    f"{first} {last}",
                    f"{first.lower()}.{last.lower()}{i}@example.com",
                    rng.choice(_CITIES),
                    _stamp(day - timedelta(days=rng.randrange(90, 730)), rng, latest),
                )
            )
        conn.executemany("INSERT INTO customers VALUES (?, ?, ?, ?, ?)", customer_rows)

        product_rows = []
        categories = sorted(_CATEGORIES)
        for i in range(1, products + 1):
            category = categories[(i - 1) % len(categories)]
            noun = rng.choice(_CATEGORIES[category])
            price = round(rng.uniform(4, 250), 2)
            product_rows.append(
                (i, f"{rng.choice(_ADJECTIVES)} {noun}", category, price, rng.randrange(0, 400))
            )
        conn.executemany("INSERT INTO products VALUES (?, ?, ?, ?, ?)", product_rows)
        prices = {row[0]: row[3] for row in product_rows}

        order_rows = []
        for i in range(1, orders + 1):
            product_id = rng.randrange(1, products + 1)
            quantity = rng.randrange(1, 6)
            age = rng.randrange(0, 90)
            status = STATUSES[i % 4] if i <= 4 else _status_for(age, rng)
            order_rows.append(
                (
                    i,
                    rng.randrange(1, customers + 1),
                    product_id,
                    quantity,
                    round(prices[product_id] * quantity, 2),
                    status,
                    _stamp(day - timedelta(days=age), rng, latest),
                )
            )
        conn.executemany("INSERT INTO orders VALUES (?, ?, ?, ?, ?, ?, ?)", order_rows)

        stock_rows = [
            (
                w,
                p,
                rng.randrange(0, 150),
                _stamp(day - timedelta(days=rng.randrange(0, 14)), rng, latest),
            )
            for w in WAREHOUSES
            for p in range(1, products + 1)
        ]
        conn.executemany("INSERT INTO stock_levels VALUES (?, ?, ?, ?)", stock_rows)
        conn.commit()
    finally:
        conn.close()
    return target


def _status_for(age_days: int, rng: random.Random) -> str:
    """Recent orders are mostly pending, older ones mostly delivered; a few are cancelled."""
    if rng.random() < 0.07:
        return "cancelled"
    if age_days < 3:
        return "pending" if rng.random() < 0.7 else "shipped"
    if age_days < 10:
        return rng.choice(("pending", "shipped", "shipped", "delivered"))
    return "delivered" if rng.random() < 0.85 else "shipped"


def ensure_demo_db(path: str | Path | None = None, *, today: date | None = None) -> Path:
    """Create the demo database at `path` (default: the platform data dir) unless it exists.

    It is built in a temporary file next to the target and renamed into place, so a crash
    never leaves half a database behind.
    """
    target = Path(path) if path is not None else paths.demo_db_path()
    if target.exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    temp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    temp.unlink(missing_ok=True)
    try:
        build_demo_db(temp, today=today)
        os.replace(temp, target)
    finally:
        temp.unlink(missing_ok=True)
    return target
