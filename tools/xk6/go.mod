module github.com/chaosrun/chaosrun/tools/xk6

go 1.26

require (
	github.com/Masterminds/semver/v3 v3.1.1 // indirect
	go.k6.io/xk6 v0.13.3 // indirect
)
