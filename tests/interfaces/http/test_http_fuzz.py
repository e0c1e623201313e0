"""Property-based fuzz of the OpenAPI document: generated requests against every operation, no 5xx, and
every response as the document declares it (status, content type, headers, body)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

import hippo
from hippo.providers.fake import FakeEmbedder

schemathesis = pytest.importorskip("schemathesis")
pytest.importorskip("fastapi")
from schemathesis.specs.openapi import checks  # noqa: E402

from hippo.interfaces.http import create_app  # noqa: E402

EXAMPLES_PER_OPERATION = 80
CONFORMANCE = [checks.status_code_conformance, checks.content_type_conformance,
               checks.response_headers_conformance, checks.response_schema_conformance]


@pytest.mark.slow  # 80 generated requests for every operation
def test_generated_requests_never_get_a_server_error(tmp_path, clock):
    mem = hippo.open(tmp_path / "fuzz.db", agent_id="default", embedder=FakeEmbedder(), clock=clock)
    hippo.create_messages_table(tmp_path / "fuzz.db")
    mem.for_agent("alice").store_memory("A memory for the fuzzer to find")
    app = create_app(mem)
    schema = schemathesis.openapi.from_asgi("/openapi.json", app)
    sent: list[tuple[str, int]] = []
    for result in schema.get_all_operations():
        operation = result.ok()

        @settings(max_examples=EXAMPLES_PER_OPERATION, deadline=None, database=None,
                  suppress_health_check=list(HealthCheck))
        @given(case=operation.as_strategy())
        def call(case) -> None:
            response = case.call()
            sent.append((operation.label, response.status_code))
            assert response.status_code < 500, (operation.label, case.as_curl_command(), response.text[:300])
            if response.status_code >= 400:
                assert set(response.json()) == {"error"}
            # Every status, content type, header and body as the OpenAPI document declares them.
            case.validate_response(response, checks=CONFORMANCE)

        call()
    operations = {label for label, _ in sent}
    every = {f"{m.upper()} {p}" for p, methods in app.openapi()["paths"].items() for m in methods}
    assert operations == every
    assert len(sent) >= 1000, f"only {len(sent)} requests"
    mem.close()
