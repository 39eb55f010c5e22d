"""butai's tools: never shipped to Lambda."""
