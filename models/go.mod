module github.com/chaosrun/chaosrun/models

go 1.26.0
