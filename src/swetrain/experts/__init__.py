"""swetrain.experts: paper 000's category-aware expert pipeline (routes -> RRE experts -> MOPD ->
category report) as one resumable driver over the existing layers; see docs/experts.md."""
