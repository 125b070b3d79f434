// SPDX-License-Identifier: MIT
module wsched/bench/compare/go

go 1.19
