"""butai: a serverless stage for characters (agent protocol and scenario director)."""
