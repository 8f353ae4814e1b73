package testenv

import "testing"

func TestMain(m *testing.M) {
	Main(m, Options{CRDs: HobbyFarmCRDs()})
}
