"""The domain: operations, strength, scoring. No SQL, HTTP, CLI or SDK imports."""
