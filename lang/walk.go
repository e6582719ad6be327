package lang

// Inspect calls f for every node under n in depth-first order, with the
// node's parent (nil for n itself).
func Inspect(n Node, f func(parent, n Node)) { walkNodes(n, f) }

func walkNodes(n Node, f func(parent, n Node)) {
	var walk func(parent, n Node)
	walk = func(parent, n Node) {
		if n == nil {
			return
		}
		f(parent, n)
		each := func(children ...Node) {
			for _, c := range children {
				if c != nil && !isNilNode(c) {
					walk(n, c)
				}
			}
		}
		switch n := n.(type) {
		case *File:
			for _, d := range n.Decls {
				each(d)
			}
		case *ConstDecl:
			each(n.Name, n.Type, n.Value)
		case *StructDecl:
			each(n.Name)
			for _, fl := range n.Fields {
				each(fl)
			}
		case *RegionDecl:
			each(n.Name, n.Type, n.Access)
		case *FuncDecl:
			each(n.Name)
			for _, fl := range n.Params {
				each(fl)
			}
			each(n.Result, n.Body)
		case *HandlerDecl:
			each(n.Name)
			for _, fl := range n.Params {
				each(fl)
			}
			for _, fl := range n.Results {
				each(fl)
			}
			if n.Reads != nil {
				each(n.Reads)
			}
			each(n.Body)
		case *ReadsClause:
			for _, e := range n.Items {
				each(e)
			}
		case *Field:
			each(n.Name, n.Type)
		case *BlockStmt:
			for _, s := range n.List {
				each(s)
			}
		case *LetStmt:
			each(n.Name, n.Type, n.Value)
		case *AssignStmt:
			each(n.Lhs, n.Rhs)
		case *ExprStmt:
			each(n.X)
		case *IfStmt:
			each(n.Cond, n.Then, n.Else)
		case *ForStmt:
			each(n.Var, n.Type, n.Low, n.High, n.Max, n.Body)
		case *ReturnStmt:
			for _, e := range n.Results {
				each(e)
			}
		case *FailStmt:
			each(n.Code)
		case *ParenExpr:
			each(n.X)
		case *UnaryExpr:
			each(n.X)
		case *BinaryExpr:
			each(n.X, n.Y)
		case *CastExpr:
			each(n.X, n.Type)
		case *CallExpr:
			each(n.Fun)
			for _, a := range n.Args {
				each(a)
			}
		case *IndexExpr:
			each(n.X, n.Index)
		case *SelectorExpr:
			each(n.X, n.Sel)
		case *ArrayType:
			each(n.Elem, n.Len)
		case *RefType:
			each(n.Elem)
		case *SliceExpr:
			each(n.X, n.Index, n.Count)
		}
	}
	walk(nil, n)
}

// isNilNode reports whether n is an interface holding a nil pointer.
func isNilNode(n Node) bool {
	switch n := n.(type) {
	case *Ident:
		return n == nil
	case *BlockStmt:
		return n == nil
	}
	return false
}
