// Who a page is for. The console is the operator's (every tenant); the portal is one tenant's developer's, whose
// token the server scopes: the shared pages leave out what only an operator may open (tenants, messages).
import { createContext } from 'preact'
import { useContext } from 'preact/hooks'

export type Scope = 'operator' | 'tenant'

export const ScopeContext = createContext<Scope>('operator')

export const useScope = (): Scope => useContext(ScopeContext)
