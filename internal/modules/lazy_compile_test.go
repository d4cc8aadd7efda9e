package modules

import "testing"

// TestLazyREsCompile compiles every package-level expression, so that a
// bad one fails here rather than at its first use in a boot.
func TestLazyREsCompile(t *testing.T) {
	for name, l := range map[string]*lazyRE{
		"aptRepoMatch": &aptRepoMatch, "sourceNameRE": &sourceNameRE, "keyidRE": &keyidRE,
		"keyserverRE": &keyserverRE, "ec2AZ": &ec2AZ, "basicMatcher": &basicMatcher,
		"templateType": &templateType, "jinjaName": &jinjaName, "jinjaCondRE": &jinjaCondRE,
		"jinjaStr": &jinjaStr, "shortDevRE": &shortDevRE, "pkgNameRE": &pkgNameRE,
		"pkgVersionRE": &pkgVersionRE, "hashedRE": &hashedRE, "repoIDRE": &repoIDRE,
		"repoKeyRE": &repoKeyRE, "zyppKeyRE": &zyppKeyRE,
	} {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s: %v", name, r)
				}
			}()
			l.get()
		}()
	}
}
