"""Realistic pastes, built deterministically: logs, tracebacks, JSON, SQL, config, code, repeats.

Each is what a user pastes into a chat: a real format with real-looking noise (timestamps,
ids, paths), not the few words a detector might key on. `PASTES` maps a class to its text.
"""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta


def application_log(lines: int = 900) -> str:
    """A service log: timestamps, levels, request lines, and two errors repeated now and then."""
    rng = random.Random(41)
    start = datetime(2026, 3, 14, 9, 0, tzinfo=UTC)
    paths = ["/api/orders", "/api/users/me", "/healthz", "/api/cart/items", "/static/app.js"]
    out = []
    for i in range(lines):
        at = (start + timedelta(milliseconds=137 * i)).isoformat(timespec="milliseconds")
        if i % 97 == 13:
            out.append(
                f"{at} ERROR [pool-3] db.pool: connection to 10.2.0.15:5432 refused "
                f"(attempt {i % 5 + 1}/5)"
            )
        elif i % 151 == 40:
            keys = rng.randint(200, 900)
            out.append(f"{at} WARN  [worker-{i % 8}] cache: eviction storm, {keys} keys")
        else:
            path = rng.choice(paths)
            out.append(
                f"{at} INFO  [http-{i % 16}] GET {path} 200 {rng.randint(2, 180)}ms "
                f"req_id={rng.getrandbits(48):012x}"
            )
    return "\n".join(out)


TRACEBACK = """Traceback (most recent call last):
  File "/srv/app/.venv/lib/python3.12/site-packages/uvicorn/protocols/http/h11_impl.py", \
line 403, in run_asgi
    result = await app(  # type: ignore[func-returns-value]
  File "/srv/app/.venv/lib/python3.12/site-packages/starlette/routing.py", line 76, in app
    response = await func(request)
  File "/srv/app/orders/api.py", line 58, in create_order
    total = sum(int(line["qty"]) * price_of(line["sku"]) for line in body["lines"])
  File "/srv/app/orders/api.py", line 58, in <genexpr>
    total = sum(int(line["qty"]) * price_of(line["sku"]) for line in body["lines"])
ValueError: invalid literal for int() with base 10: 'two'"""


def json_document() -> str:
    """A pretty-printed API response."""
    doc = {
        "id": "ord_8f2a91",
        "status": "failed",
        "created_at": "2026-03-14T09:12:44Z",
        "customer": {"id": "cus_1182", "tier": "gold", "locale": "en-GB"},
        "lines": [
            {"sku": f"SKU-{n:04d}", "qty": n % 3 + 1, "unit_price": round(3.5 * n, 2)}
            for n in range(1, 9)
        ],
        "error": {"code": "payment_declined", "retryable": False},
    }
    return json.dumps(doc, indent=2)


SQL_DUMP = (
    """--
-- PostgreSQL database dump
--

SET statement_timeout = 0;
SET client_encoding = 'UTF8';

CREATE TABLE public.customers (
    id integer NOT NULL,
    email text NOT NULL,
    tier character varying(16) DEFAULT 'standard'::character varying,
    created_at timestamp with time zone DEFAULT now()
);

CREATE TABLE public.orders (
    id integer NOT NULL,
    customer_id integer REFERENCES public.customers(id),
    status text NOT NULL,
    total_cents bigint
);

"""
    + "\n".join(
        "INSERT INTO public.orders (id, customer_id, status, total_cents) "
        f"VALUES ({n}, {n % 7 + 1}, '{('paid', 'failed', 'refunded')[n % 3]}', {1000 + 37 * n});"
        for n in range(1, 41)
    )
    + """

ALTER TABLE ONLY public.orders
    ADD CONSTRAINT orders_pkey PRIMARY KEY (id);
CREATE INDEX orders_customer_idx ON public.orders USING btree (customer_id);"""
)

YAML_CONFIG = """# deploy/values.yaml
replicaCount: 3
image:
  repository: registry.example.internal/orders
  tag: "2026.03.14-1"
  pullPolicy: IfNotPresent
service:
  type: ClusterIP
  port: 8080
resources:
  limits:
    cpu: 500m
    memory: 512Mi
env:
  - name: DATABASE_URL
    value: postgresql://orders@db:5432/orders
  - name: LOG_LEVEL
    value: info
"""

INI_CONFIG = """[server]
host = 0.0.0.0
port = 8080
workers = 4

[database]
url = postgresql://orders@db:5432/orders
pool_size = 20
timeout_s = 5.0

[logging]
level = INFO
format = %(asctime)s %(levelname)s %(name)s %(message)s
"""

CODE_FILE = """import asyncio
from dataclasses import dataclass


@dataclass
class Order:
    id: str
    lines: list[tuple[str, int]]

    def total(self, prices: dict[str, float]) -> float:
        return sum(prices[sku] * qty for sku, qty in self.lines)


async def fetch_prices(client, skus):
    results = await asyncio.gather(*(client.get(f"/prices/{s}") for s in skus))
    return {s: r.json()["price"] for s, r in zip(skus, results)}


async def main() -> None:
    order = Order("ord_1", [("SKU-1", 2), ("SKU-2", 1)])
    prices = await fetch_prices(None, [sku for sku, _ in order.lines])
    print(order.total(prices))


if __name__ == "__main__":
    asyncio.run(main())
"""

CSV_TABLE = "order_id,customer,status,total\n" + "\n".join(
    f"ord_{n:04d},cus_{n % 9:03d},{('paid', 'failed')[n % 2]},{12.5 * n:.2f}" for n in range(60)
)

REPEATED = "\n".join(["Retrying request to upstream service..."] * 400)

PASTES: dict[str, str] = {
    "log": application_log(),
    "traceback": TRACEBACK,
    "json": json_document(),
    "sql": SQL_DUMP,
    "yaml": YAML_CONFIG,
    "ini": INI_CONFIG,
    "code": CODE_FILE,
    "csv": CSV_TABLE,
    "repeated": REPEATED,
}

PROSE_PARAGRAPH = (
    "Last summer my partner and I finally took the trip we had been planning for years. We "
    "drove from Porto down the coast to Lagos, stopping in small fishing towns along the way, "
    "and I realised how much I prefer slow travel to packing in the sights. The best day was "
    "a long, lazy lunch in Nazaré, watching the surfers while the kids built a sandcastle. "
    "Next year we want to do the same in Galicia, though my knee surgery in March may "
    "change the plan, so I'm keeping it flexible for now."
)
CHINESE_PARAGRAPH = (
    "我在杭州住了五年，去年才搬到上海工作。平时我喜欢周末去郊外爬山，尤其是天目山那一带，"
    "空气很好，人也不多。我对花生过敏，所以在外面吃饭的时候总要先问清楚菜里有没有花生。"
    "明年春天我打算带父母去一趟云南，他们一直想去大理看看。"
)
FACT_LIST = """My name is Priya Raman.
I live in Leeds with my husband Tom.
I'm allergic to penicillin.
My daughter Mira starts primary school in September.
I work night shifts as a nurse at St James's.
I prefer to be contacted by text, never by phone.
I'm vegetarian."""
